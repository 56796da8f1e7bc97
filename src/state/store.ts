/**
 * The Store: shared state of the data plane. Budgets reserve before a request is sent and settle
 * after, so a burst of concurrent requests, or N proxies sharing one Redis, cannot overshoot a hard
 * cap by more than one request's cost. `MemoryStore` is the embedded default (one process);
 * `RedisStore` shares the same semantics across proxies.
 */

export type CapKind = 'daily' | 'monthly';

export interface ReserveRequest {
  workspace: string;
  /** Unique per request (e.g. the trace id); settle and release name the reservation by it. */
  id: string;
  /** The request's worst-case cost (budget.worstCaseCostUsd). */
  amountUsd: number;
  /** Absent or null: no daily cap. A workspace that saved none is held to DEFAULT_DAILY_CAP_USD by the caller. */
  dailyCapUsd?: number | null;
  monthlyCapUsd?: number | null;
  /** The hard cap is on (budget.hardCapEnforced): refuse at or over a cap instead of only reporting it. */
  enforce: boolean;
  /** Defaults to Date.now(); injected by tests. */
  now?: number;
}

export interface SettleRequest {
  workspace: string;
  id: string;
  /** The request's real cost; 0 releases the reservation (the request failed before any cost). */
  actualUsd: number;
  now?: number;
}

/** What the `X-Svc-Budget-*` headers are computed from. Spend is settled; reserved is held by requests in flight. */
export interface BudgetSnapshot {
  spentTodayUsd: number;
  reservedTodayUsd: number;
  spentMonthUsd: number;
  reservedMonthUsd: number;
}

interface Decision {
  /** The budget after this decision (including this reservation when it was allowed). */
  budget: BudgetSnapshot;
  /** Decided by this process alone from the last known counters, because the shared store did not answer in time. */
  degraded: boolean;
}

export interface Allowed extends Decision {
  allowed: true;
  /** A cap was already reached (soft mode): warn on the trace. */
  overCap: boolean;
  /** The cap reached, when overCap. */
  cap?: CapKind;
}

export interface Refused extends Decision {
  allowed: false;
  reason: 'OVERAGE_HARD_CAP_EXCEEDED';
  cap: CapKind;
  /** Until the next UTC midnight (daily) or month start (monthly). */
  retryAfterSeconds: number;
}

export type ReserveResult = Allowed | Refused;

export interface StoreHealth {
  kind: 'memory' | 'redis';
  connected: boolean;
  lastError?: string;
  /** Settlements waiting to be replayed into Redis. */
  pendingSettlements?: number;
  /** Settlements lost because the replay queue was full (each one was logged). */
  droppedSettlements?: number;
}

/** One counter of calls: its key (within the workspace), the most it may reach, and when its period ends. */
export interface CallCounter {
  readonly key: string;
  readonly limit: number;
  readonly expiresAt: number;
}

export interface CallCountRequest {
  readonly workspace: string;
  readonly counters: readonly CallCounter[];
  readonly now: number;
}

export interface CallCountResult {
  /** The index of a counter already at its limit (nothing was counted), or null when the call was counted in every one. */
  readonly exceeded: number | null;
  /** Each counter after this call (before it, when refused). */
  readonly counts: readonly number[];
  /** Counted by this process alone: the shared store could not be reached. */
  readonly degraded: boolean;
}

export interface Store {
  /**
   * Counts one call in every counter unless one of them is at its limit; atomic across every
   * process sharing the store (MCP budgets). Never rejects for a store fault: counts locally then.
   */
  countCall(req: CallCountRequest): Promise<CallCountResult>;
  /** Atomically checks the caps and holds `amountUsd` for request `id`. Never rejects for a store fault. */
  reserve(req: ReserveRequest): Promise<ReserveResult>;
  /** Replaces reservation `id` by the actual cost, once: a repeat, or an unknown or expired id, adds the cost once. */
  settle(req: SettleRequest): Promise<void>;
  /** settle with a cost of 0. */
  release(req: Omit<SettleRequest, 'actualUsd'>): Promise<void>;
  snapshot(workspace: string, now?: number): Promise<BudgetSnapshot>;
  /** Exact-response cache; values are opaque bytes. A store fault reads as a miss. */
  cacheGet(workspace: string, key: string): Promise<Buffer | undefined>;
  cacheSet(workspace: string, key: string, value: Buffer, ttlMs: number): Promise<void>;
  health(): StoreHealth;
  close(): Promise<void>;
}

/** Lifetimes of budget bookkeeping, shared by both stores. */
export interface LedgerOptions {
  /** How long an unsettled reservation holds budget (a crashed proxy's requests). Default 15 minutes. */
  reservationTtlMs?: number;
  /**
   * How long a settled id is remembered, so a repeated or replayed settle adds nothing; never less
   * than the reservation TTL. Default 24 hours for RedisStore (its replays may come after an
   * outage or a restart), the reservation TTL for MemoryStore (nothing it settles is replayed).
   */
  settledTtlMs?: number;
}

export function resolveLedgerOptions(opts: LedgerOptions): Required<LedgerOptions> {
  const reservationTtlMs = opts.reservationTtlMs ?? 15 * 60_000;
  // A settled marker must outlive any reservation, or a late settle could be charged twice.
  const settledTtlMs = Math.max(opts.settledTtlMs ?? 24 * 3_600_000, reservationTtlMs);
  return { reservationTtlMs, settledTtlMs };
}
