/**
 * RedisStore: the Store shared by every proxy through one Redis/Valkey (or a Cluster: keys are
 * hash-tagged by workspace, see keys.ts). Reserve, settle and snapshot are atomic Lua scripts
 * (scripts.ts); the cache is plain GET/SET PX.
 *
 * FAULT BEHAVIOUR. Redis down or slow never crashes the proxy, never leaves a request hanging and
 * never loses spend:
 *  - Every call has a deadline (reserve 500 ms, snapshot and cache 200 ms, settle 1 s by default).
 *    A Redis that is down fails at once (no offline queue); the deadline is for a slow one. It is
 *    not shorter because under a burst the event loop can be busy long enough for a short timer to
 *    fire before a reply that has already arrived is read, which would decide from stale counters.
 *    ioredis fails fast (no offline queue, nothing resent after a disconnect, a commandTimeout,
 *    reconnection forever with backoff ≤ 1 s) and its 'error' events are handled here. No method
 *    rejects because of Redis.
 *  - reserve: when Redis does not answer in time, this process decides alone (`degraded: true`)
 *    from the last counters Redis reported for the workspace plus what it added since: its local
 *    reservations and its queued settlements (LocalLedger). So the hard cap stays enforced from the
 *    last known state. A workspace Redis never reported to this process starts from zero.
 *  - settle: when Redis does not acknowledge, the settlement is queued (bounded by
 *    maxPendingSettlements; a drop is counted in health() and logged) and counts as local spend.
 *    The queue is replayed as soon as the connection is ready again, and retried every second while
 *    anything is left. Replaying is safe because settle is idempotent (a settled id is remembered
 *    for settledTtlMs), so a settlement that timed out yet reached Redis is not charged twice.
 *    Each reply refreshes the local counters, so they reconcile as the replay lands.
 *  - snapshot falls back to the local view; cacheGet reads as a miss; cacheSet is skipped.
 *  - N proxies cut off at once each enforce from their own view: during an outage a cap can be
 *    overshot by what each proxy allows locally, not by the whole fleet's traffic unchecked.
 *  - Reservations left by a crashed proxy expire after reservationTtlMs.
 *  - close() gives queued settlements one last bounded chance and logs any it could not deliver.
 */
import type { Redis } from 'ioredis';
import { createLogger, type Logger } from '../../lib/logger.js';
import { toMicros, toUsd } from '../micros.js';
import { COUNTER_GRACE_MS, periodOf, type Period } from '../periods.js';
import {
  type CallCountRequest,
  type CallCountResult,
  resolveLedgerOptions,
  type BudgetSnapshot,
  type CapKind,
  type LedgerOptions,
  type ReserveRequest,
  type ReserveResult,
  type SettleRequest,
  type Store,
  type StoreHealth,
} from '../store.js';
import { allowedResult, capsOf, decide, refusedResult, toSnapshot, type Totals } from '../verdict.js';
import { createRedisClient, withTimeout } from './connection.js';
import { cacheKey, workspacePrefix } from './keys.js';
import { LedgerFile, type LedgerState } from './ledger-file.js';
import { LocalLedger } from './local-ledger.js';
import { COUNT_CALL, RESERVE, SETTLE, SNAPSHOT } from './scripts.js';
import { CallCounters } from '../call-counters.js';
import { SettlementQueue, type Settlement } from './settlement-queue.js';

export interface RedisStoreOptions extends LedgerOptions {
  /** `redis://`, `rediss://`, `valkey://` or `valkeys://`. */
  url: string;
  /** Deadline of reserve, which is on the request path. Default 500 ms. */
  reserveTimeoutMs?: number;
  /** Deadline of settle before it is queued for replay. Default 1 s. */
  settleTimeoutMs?: number;
  /** Deadline of snapshot, cacheGet and cacheSet. Default 200 ms. */
  readTimeoutMs?: number;
  /** Bound of the replay queue. Default 100,000 settlements. */
  maxPendingSettlements?: number;
  /**
   * Where the local ledger is saved (see LedgerFile), so that a restart while Redis is down still
   * enforces the caps this process knew of and replays the settlements it owed. None: memory only.
   */
  ledgerFile?: string;
  logger?: Logger;
}

const REPLAY_BATCH = 100;
const REPLAY_RETRY_MS = 1000;
const CLOSE_REPLAY_MS = 2000;
const DROP_LOG_INTERVAL_MS = 10_000;
const REACHED: readonly (CapKind | null)[] = [null, 'daily', 'monthly'];

export class RedisStore implements Store {
  private readonly redis: Redis;
  private readonly ledger: Required<LedgerOptions>;
  private readonly local: LocalLedger;
  /** MCP call counts while Redis cannot be reached. */
  private readonly localCalls = new CallCounters();
  private readonly file: LedgerFile | null;
  private readonly pending: SettlementQueue;
  private readonly timeouts: { reserve: number; settle: number; read: number };
  private readonly logger: Logger;
  private lastError: string | undefined;
  /** Connected now / ever: a reconnect and a lost connection are logged once each, not every retry. */
  private up = false;
  private everUp = false;
  private replaying = false;
  private replayTimer: NodeJS.Timeout | undefined;
  private dropLoggedAt = -Infinity;
  private closed = false;

  constructor(opts: RedisStoreOptions) {
    this.ledger = resolveLedgerOptions(opts);
    this.timeouts = { reserve: opts.reserveTimeoutMs ?? 500, settle: opts.settleTimeoutMs ?? 1000, read: opts.readTimeoutMs ?? 200 };
    this.pending = new SettlementQueue(opts.maxPendingSettlements ?? 100_000);
    this.logger = opts.logger ?? createLogger('silent');
    this.local = new LocalLedger(() => this.file?.markDirty());
    this.file = opts.ledgerFile === undefined ? null : new LedgerFile(opts.ledgerFile, () => this.ledgerState(), this.logger);
    if (opts.ledgerFile !== undefined) this.restore(opts.ledgerFile);
    this.redis = createRedisClient(opts.url, {
      commandTimeoutMs: Math.max(this.timeouts.reserve, this.timeouts.settle, this.timeouts.read),
      connectTimeoutMs: 1000,
    });
    this.redis.on('error', (err: Error) => this.fault(err));
    this.redis.on('ready', () => {
      if (this.everUp) this.logger.info({ pendingSettlements: this.pending.length }, 'store: redis reconnected');
      this.up = this.everUp = true;
      void this.replay();
    });
    this.redis.on('close', () => {
      if (this.up && !this.closed) this.logger.warn('store: redis connection lost; budgets decided locally until it is back');
      this.up = false;
    });
  }

  /** true once connected; false if not within `timeoutMs`. Optional: until then the store decides locally. */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.redis.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const onReady = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      this.redis.once('ready', onReady);
    });
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = req.now ?? Date.now();
    const micros = toMicros(req.amountUsd, 'amountUsd');
    const caps = capsOf(req);
    const period = periodOf(now);
    try {
      const reply = await withTimeout(
        RESERVE.run(
          this.redis,
          [workspacePrefix(req.workspace)],
          [
            req.id,
            micros,
            ...periodArgs(period),
            now,
            this.ledger.reservationTtlMs,
            caps.daily ?? -1,
            caps.monthly ?? -1,
            req.enforce ? 1 : 0,
          ],
        ),
        this.timeouts.reserve,
        'reserve',
      );
      const [reached, held, ...counters] = integers(reply, 6);
      const totals = totalsOf(counters);
      this.local.observe(req.workspace, period, totals);
      const cap = REACHED[reached!] ?? null;
      if (held === 1) return allowedResult(totals, cap, false);
      if (cap === null) throw new Error('the reserve script refused without naming a cap');
      return refusedResult(totals, cap, now, false);
    } catch (err) {
      this.fault(err);
      const alreadyHeld = this.local.isHeld(req.workspace, req.id);
      return decide(this.local.totals(req.workspace, period, now), { caps, enforce: req.enforce, micros, now, alreadyHeld, degraded: true }, () =>
        this.local.hold(req.workspace, req.id, micros, period, now + this.ledger.reservationTtlMs),
      );
    }
  }

  async settle(req: SettleRequest): Promise<void> {
    const now = req.now ?? Date.now();
    const micros = toMicros(req.actualUsd, 'actualUsd');
    const localHold = this.local.release(req.workspace, req.id);
    const settlement: Settlement = { workspace: req.workspace, id: req.id, micros, period: localHold?.period ?? periodOf(now), now };
    if (await this.deliver(settlement)) return;
    if (this.pending.push(settlement)) {
      this.local.queued(settlement);
      this.scheduleReplay();
    } else {
      this.logDrop(settlement);
    }
  }

  release(req: Omit<SettleRequest, 'actualUsd'>): Promise<void> {
    return this.settle({ ...req, actualUsd: 0 });
  }

  async snapshot(workspace: string, now = Date.now()): Promise<BudgetSnapshot> {
    const period = periodOf(now);
    try {
      const reply = await withTimeout(
        SNAPSHOT.run(this.redis, [workspacePrefix(workspace)], [period.day, period.month, now]),
        this.timeouts.read,
        'snapshot',
      );
      const totals = totalsOf(integers(reply, 4));
      this.local.observe(workspace, period, totals);
      return toSnapshot(totals);
    } catch (err) {
      this.fault(err);
      return toSnapshot(this.local.totals(workspace, period, now));
    }
  }

  async countCall(req: CallCountRequest): Promise<CallCountResult> {
    if (req.counters.length === 0) return { exceeded: null, counts: [], degraded: false };
    try {
      const args = [req.now, ...req.counters.flatMap((c) => [c.key, c.limit, c.expiresAt])];
      const reply = (await withTimeout(COUNT_CALL.run(this.redis, [workspacePrefix(req.workspace)], args), this.timeouts.reserve, 'count call')) as number[];
      const [at, ...counts] = reply.map(Number);
      return { exceeded: at === 0 ? null : at! - 1, counts, degraded: false };
    } catch (err) {
      this.fault(err);
      return this.localCalls.count(req, true);
    }
  }

  async cacheGet(workspace: string, key: string): Promise<Buffer | undefined> {
    try {
      return (await withTimeout(this.redis.getBuffer(cacheKey(workspace, key)), this.timeouts.read, 'cache get')) ?? undefined;
    } catch (err) {
      this.fault(err);
      return undefined;
    }
  }

  async cacheSet(workspace: string, key: string, value: Buffer, ttlMs: number): Promise<void> {
    if (!(ttlMs >= 1)) return;
    try {
      await withTimeout(this.redis.set(cacheKey(workspace, key), value, 'PX', Math.ceil(ttlMs)), this.timeouts.read, 'cache set');
    } catch (err) {
      this.fault(err);
    }
  }

  health(): StoreHealth {
    const health: StoreHealth = {
      kind: 'redis',
      connected: this.redis.status === 'ready',
      pendingSettlements: this.pending.length,
      droppedSettlements: this.pending.dropped,
    };
    if (this.lastError !== undefined) health.lastError = this.lastError;
    return health;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.replayTimer);
    if (this.pending.length > 0) await withTimeout(this.replay(), CLOSE_REPLAY_MS, 'final replay').catch(() => undefined);
    this.file?.close();
    if (this.pending.length > 0) {
      this.logger.error({ lostSettlements: this.pending.length }, 'store: closing with settlements Redis never acknowledged; their spend is lost');
    }
    if (this.redis.status === 'ready') await withTimeout(this.redis.quit(), 1000, 'quit').catch(() => undefined);
    this.redis.disconnect();
  }

  /** Sends one settlement; false (and noted) when Redis did not acknowledge it in time. */
  private ledgerState(): LedgerState {
    return { version: 1, ...this.local.exportState(), settlements: [...this.pending.all()] };
  }

  /** Takes back what an earlier process saved: its counters, its reservations, and the settlements it still owed Redis. */
  private restore(path: string): void {
    const saved = LedgerFile.load(path, this.logger);
    if (saved === null) return;
    this.local.restore(saved);
    for (const s of saved.settlements) if (this.pending.push(s)) this.local.queued(s);
    if (saved.settlements.length > 0) this.logger.info({ pendingSettlements: this.pending.length }, 'store: settlements owed to redis taken back from the saved ledger');
  }

  private async deliver(s: Settlement): Promise<boolean> {
    try {
      const reply = await withTimeout(
        SETTLE.run(this.redis, [workspacePrefix(s.workspace)], [s.id, s.micros, ...periodArgs(s.period), s.now, this.ledger.settledTtlMs]),
        this.timeouts.settle,
        'settle',
      );
      this.local.observe(s.workspace, s.period, totalsOf(integers(reply, 4)));
      return true;
    } catch (err) {
      this.fault(err);
      return false;
    }
  }

  /** Delivers queued settlements in batches until none is left or Redis fails again. */
  private async replay(): Promise<void> {
    if (this.replaying) return;
    this.replaying = true;
    let replayed = 0;
    try {
      while (this.pending.length > 0 && this.redis.status === 'ready') {
        const batch = this.pending.take(REPLAY_BATCH);
        const delivered = await Promise.all(batch.map((s) => this.deliver(s)));
        const failed = batch.filter((s, i) => {
          if (delivered[i] === true) this.local.delivered(s);
          return delivered[i] !== true;
        });
        replayed += batch.length - failed.length;
        if (failed.length > 0) {
          this.pending.putBack(failed);
          break;
        }
      }
    } finally {
      this.replaying = false;
    }
    if (replayed > 0) this.logger.info({ replayed, pendingSettlements: this.pending.length }, 'store: replayed queued settlements');
    if (this.pending.length > 0) this.scheduleReplay();
  }

  private scheduleReplay(): void {
    if (this.replayTimer !== undefined || this.closed) return;
    this.replayTimer = setTimeout(() => {
      this.replayTimer = undefined;
      void this.replay();
    }, REPLAY_RETRY_MS);
    this.replayTimer.unref();
  }

  private logDrop(s: Settlement): void {
    const now = Date.now();
    if (now - this.dropLoggedAt < DROP_LOG_INTERVAL_MS) return;
    this.dropLoggedAt = now;
    this.logger.error(
      { workspace: s.workspace, id: s.id, usd: toUsd(s.micros), droppedSettlements: this.pending.dropped, capacity: this.pending.capacity },
      'store: settlement queue full; settlement dropped and its spend lost',
    );
  }

  /** Remembers the fault for health(); logs each new kind of fault once, not every retry. */
  private fault(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message !== this.lastError) this.logger.warn({ err: message }, 'store: redis fault');
    this.lastError = message;
  }
}

/** ARGV 3–6 of the budget scripts: the period and when its counters expire. */
function periodArgs(p: Period): [string, string, number, number] {
  return [p.day, p.month, p.dayEndsAt + COUNTER_GRACE_MS, p.monthEndsAt + COUNTER_GRACE_MS];
}

function integers(reply: unknown, length: number): number[] {
  if (!Array.isArray(reply) || reply.length !== length || !reply.every(Number.isSafeInteger)) {
    throw new Error(`unexpected script reply ${JSON.stringify(reply)}`);
  }
  return reply as number[];
}

function totalsOf([spentDay = 0, reservedDay = 0, spentMonth = 0, reservedMonth = 0]: number[]): Totals {
  return { spentDay, reservedDay, spentMonth, reservedMonth };
}
