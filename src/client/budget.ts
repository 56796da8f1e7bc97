import { headerValue, type BudgetBodyWire, type ResponseHeaders } from './wire.js';

/**
 * The workspace's spend headroom as the client last learnt it: from the control plane's
 * `GET /api/v1/budget`, or from the `X-Svc-Budget-*` headers of the proxy's last answer. It is
 * workspace-level headroom, not a check that one call is affordable.
 */
export interface BudgetPeriod {
  readonly limitUsd: number;
  /** What is left of the cap; from the proxy's headers this also counts requests in flight. */
  readonly remainingUsd: number;
  /** Spend so far, when the source reports it (the control plane does, the headers do not). */
  readonly spentUsd: number | null;
}

export interface BudgetStatus {
  readonly daily: BudgetPeriod;
  /** Null when the workspace has no monthly cap. */
  readonly monthly: BudgetPeriod | null;
  readonly source: 'control_plane' | 'proxy_headers';
  /** When it was learnt, by the client's clock (ms). */
  readonly asOf: number;
}

/** How long a budget learnt from either source is served without asking again. */
export const BUDGET_TTL_MS = 30_000;

const HEADER = {
  dailyLimit: 'x-svc-budget-daily-limit',
  dailyRemaining: 'x-svc-budget-daily-remaining',
  monthlyLimit: 'x-svc-budget-monthly-limit',
  monthlyRemaining: 'x-svc-budget-monthly-remaining',
} as const;

function usd(headers: ResponseHeaders, name: string): number | null {
  const raw = headerValue(headers, name);
  if (raw === undefined || raw.trim() === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** The budget in an answer's `X-Svc-Budget-*` headers; null when it carries none (or unreadable ones). */
export function budgetFromHeaders(headers: ResponseHeaders, asOf: number): BudgetStatus | null {
  const dailyLimit = usd(headers, HEADER.dailyLimit);
  const dailyRemaining = usd(headers, HEADER.dailyRemaining);
  if (dailyLimit === null || dailyRemaining === null) return null;
  const monthlyLimit = usd(headers, HEADER.monthlyLimit);
  const monthlyRemaining = usd(headers, HEADER.monthlyRemaining);
  return {
    daily: { limitUsd: dailyLimit, remainingUsd: dailyRemaining, spentUsd: null },
    monthly: monthlyLimit === null || monthlyRemaining === null ? null : { limitUsd: monthlyLimit, remainingUsd: monthlyRemaining, spentUsd: null },
    source: 'proxy_headers',
    asOf,
  };
}

const left = (cap: number, spent: number) => Math.max(0, Math.round((cap - spent) * 1e6) / 1e6);

export function budgetFromControlPlane(body: BudgetBodyWire, asOf: number): BudgetStatus {
  return {
    daily: { limitUsd: body.dailyUsd, remainingUsd: left(body.dailyUsd, body.spentTodayUsd), spentUsd: body.spentTodayUsd },
    monthly: body.monthlyUsd === null ? null : { limitUsd: body.monthlyUsd, remainingUsd: left(body.monthlyUsd, body.spentThisMonthUsd), spentUsd: body.spentThisMonthUsd },
    source: 'control_plane',
    asOf,
  };
}

/**
 * A 30-second cache in front of a budget fetch: `check` answers from the cache while it is fresh,
 * otherwise fetches (callers arriving meanwhile share that one fetch); `learn` refreshes the cache
 * from a proxy answer's headers, which also restarts its 30 seconds.
 */
export class BudgetCache {
  private current: BudgetStatus | null = null;
  private inflight: Promise<BudgetStatus> | null = null;

  constructor(
    private readonly fetch: () => Promise<BudgetStatus>,
    private readonly clock: () => number,
    private readonly ttlMs = BUDGET_TTL_MS,
  ) {}

  async check(): Promise<BudgetStatus> {
    const current = this.current;
    if (current !== null && this.clock() - current.asOf < this.ttlMs) return current;
    this.inflight ??= this.fetch().then(
      (status) => {
        this.inflight = null;
        // A header learnt while the fetch was out is newer than what the fetch started from.
        if (this.current === null || this.current.asOf <= status.asOf) this.current = status;
        return status;
      },
      (err: unknown) => {
        this.inflight = null;
        throw err;
      },
    );
    return this.inflight;
  }

  /** Takes the budget from an answer's headers, when it carries one; returns it. */
  learn(headers: ResponseHeaders): BudgetStatus | null {
    const status = budgetFromHeaders(headers, this.clock());
    if (status !== null) this.current = status;
    return status;
  }
}
