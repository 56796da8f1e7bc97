/** What each plan includes that the control plane enforces. */
export interface Plan {
  /** Members at most; null is unlimited. */
  readonly seats: number | null;
  /** Single sign-on (needed for a non-null sso_group_policy). */
  readonly singleSignOn: boolean;
}

export const PLANS: Readonly<Record<string, Plan>> = {
  free_trial: { seats: 5, singleSignOn: false },
  team: { seats: 50, singleSignOn: false },
  pro: { seats: 250, singleSignOn: false },
  enterprise: { seats: null, singleSignOn: true },
};

export function planOf(name: string): Plan {
  return PLANS[name] ?? PLANS.free_trial!;
}
