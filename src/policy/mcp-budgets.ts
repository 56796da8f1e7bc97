/**
 * The workspace's `mcpBudgets` (seed 001) applied to one MCP tool call: which budgets count it,
 * and the counter of each in its current period. Pure: the counting itself is the store's.
 */

export interface McpBudget {
  readonly id: string;
  readonly scope: 'server' | 'tool' | 'member' | 'member_server';
  readonly server?: string | undefined;
  readonly tool?: string | undefined;
  readonly memberId?: string | undefined;
  readonly period: 'hour' | 'day';
  readonly limit: number;
}

export interface McpBudgetCounter {
  readonly budget: McpBudget;
  /** Unique per budget and period. */
  readonly key: string;
  readonly limit: number;
  /** When the period ends (ms). */
  readonly expiresAt: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Whether a budget counts a call. A `tool` budget names the tool and, when it names a server too,
 * only that server's tool; member budgets count only calls whose member is known.
 */
export function budgetApplies(budget: McpBudget, call: { server: string; tool: string; memberId: string | null }): boolean {
  switch (budget.scope) {
    case 'server':
      return budget.server === call.server;
    case 'tool':
      return budget.tool === call.tool && (budget.server === undefined || budget.server === call.server);
    case 'member':
      return call.memberId !== null && budget.memberId === call.memberId;
    case 'member_server':
      return call.memberId !== null && budget.memberId === call.memberId && budget.server === call.server;
  }
}

/** The counters a call is counted in: one per applicable budget, in its current hour or UTC day. */
export function budgetCounters(budgets: readonly McpBudget[], call: { server: string; tool: string; memberId: string | null }, now: number): McpBudgetCounter[] {
  return budgets
    .filter((b) => budgetApplies(b, call))
    .map((budget) => {
      const length = budget.period === 'hour' ? HOUR_MS : DAY_MS;
      const start = Math.floor(now / length) * length;
      return { budget, key: `${budget.id}:${budget.period === 'hour' ? 'h' : 'd'}${start}`, limit: budget.limit, expiresAt: start + length };
    });
}

/** Whether a count has reached the workspace's warning share of its limit. */
export function pastWarning(count: number, limit: number, warnAtPct: number | undefined): boolean {
  return warnAtPct !== undefined && count * 100 >= limit * warnAtPct;
}
