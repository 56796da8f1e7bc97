import { CallCounters } from './call-counters.js';
import { LruCache } from './lru-cache.js';
import { toMicros } from './micros.js';
import { COUNTER_GRACE_MS, periodOf, type Period } from './periods.js';
import { SettledIds } from './settled-ids.js';
import {
  resolveLedgerOptions,
  type BudgetSnapshot,
  type CallCountRequest,
  type CallCountResult,
  type LedgerOptions,
  type ReserveRequest,
  type ReserveResult,
  type SettleRequest,
  type Store,
  type StoreHealth,
} from './store.js';
import { capsOf, decide, toSnapshot, type Totals } from './verdict.js';

export interface MemoryStoreOptions extends LedgerOptions {
  /** Bound of the response cache, least recently used evicted first. Default 64 MiB. */
  cacheMaxBytes?: number;
  /** How many settled ids the store remembers at most, across workspaces, the oldest forgotten first. Default 16,384. */
  maxSettledIds?: number;
}

/**
 * A settled id only has to outlive the settles that could repeat it, and in one process those are
 * the same request's: far fewer than this many. Without a bound the ids grow with the request
 * rate (at 12,000 requests a second, 15 minutes of them is about a gigabyte). Forgetting an id
 * early can only charge a repeat of it twice, never let spend through uncounted.
 */
const DEFAULT_MAX_SETTLED_IDS = 16_384;

interface Reservation {
  micros: number;
  /** The period the reservation counts against; its settlement is charged there too. */
  period: Period;
  expiresAt: number;
}

/** Settled and reserved micro-USD of one day or one month. */
interface Counter {
  spent: number;
  reserved: number;
  expiresAt: number;
}

/** One workspace's budget state: the in-memory twin of its Redis keys (redis/keys.ts). */
interface Ledger {
  /** By period id: `YYYY-MM-DD` or `YYYY-MM`. */
  counters: Map<string, Counter>;
  /** Reservations by id. One TTL for all, so insertion order is expiry order. */
  held: Map<string, Reservation>;
  /** Settled ids, until the store's `SettledIds` forgets them. */
  settled: Set<string>;
}

const SWEEP_INTERVAL_MS = 60_000;

/**
 * The embedded Store: one process, the same semantics as RedisStore (see the Redis scripts). Every
 * operation runs to completion on the event loop, which makes it atomic.
 */
export class MemoryStore implements Store {
  private readonly ledgerOptions: Required<LedgerOptions>;
  private readonly ledgers = new Map<string, Ledger>();
  private readonly cache: LruCache;
  private readonly calls = new CallCounters();
  private readonly settled: SettledIds;
  private sweptAt = 0;

  constructor(opts: MemoryStoreOptions = {}) {
    // Nothing it settles is ever replayed (no queue, nothing kept across a restart), so a settled id
    // is remembered as long as a reservation lives, not the day RedisStore keeps for replays: a day
    // of ids at 100 requests a second would hold most of a gigabyte.
    this.ledgerOptions = resolveLedgerOptions({ ...opts, settledTtlMs: opts.settledTtlMs ?? 0 });
    this.cache = new LruCache(opts.cacheMaxBytes ?? 64 * 1024 * 1024);
    this.settled = new SettledIds(opts.maxSettledIds ?? DEFAULT_MAX_SETTLED_IDS);
  }

  async countCall(req: CallCountRequest): Promise<CallCountResult> {
    return this.calls.count(req, false);
  }

  async reserve(req: ReserveRequest): Promise<ReserveResult> {
    const now = req.now ?? Date.now();
    const micros = toMicros(req.amountUsd, 'amountUsd');
    const caps = capsOf(req);
    const period = periodOf(now);
    const ledger = this.ledger(req.workspace, now);
    const alreadyHeld = ledger.held.has(req.id) || ledger.settled.has(req.id);
    return decide(totals(ledger, period, now), { caps, enforce: req.enforce, micros, now, alreadyHeld, degraded: false }, () => {
      ledger.held.set(req.id, { micros, period, expiresAt: now + this.ledgerOptions.reservationTtlMs });
      add(ledger, 'reserved', period, micros, now);
    });
  }

  async settle(req: SettleRequest): Promise<void> {
    const now = req.now ?? Date.now();
    const micros = toMicros(req.actualUsd, 'actualUsd');
    const ledger = this.ledger(req.workspace, now);
    if (ledger.settled.has(req.id)) return;
    const reservation = ledger.held.get(req.id);
    if (reservation !== undefined) {
      ledger.held.delete(req.id);
      take(ledger, reservation, now);
    }
    add(ledger, 'spent', reservation?.period ?? periodOf(now), micros, now);
    this.settled.remember(ledger.settled, req.id, now + this.ledgerOptions.settledTtlMs);
  }

  release(req: Omit<SettleRequest, 'actualUsd'>): Promise<void> {
    return this.settle({ ...req, actualUsd: 0 });
  }

  async snapshot(workspace: string, now = Date.now()): Promise<BudgetSnapshot> {
    return toSnapshot(totals(this.ledger(workspace, now), periodOf(now), now));
  }

  async cacheGet(workspace: string, key: string): Promise<Buffer | undefined> {
    return this.cache.get(`${workspace}\0${key}`, Date.now());
  }

  async cacheSet(workspace: string, key: string, value: Buffer, ttlMs: number): Promise<void> {
    this.cache.set(`${workspace}\0${key}`, value, ttlMs, Date.now());
  }

  health(): StoreHealth {
    return { kind: 'memory', connected: true };
  }

  async close(): Promise<void> {
    this.settled.clear();
    this.ledgers.clear();
  }

  /** The workspace's ledger with its expired entries gone; once a minute, idle ledgers are tidied too. */
  private ledger(workspace: string, now: number): Ledger {
    this.settled.expire(now);
    if (now - this.sweptAt >= SWEEP_INTERVAL_MS) {
      this.sweptAt = now;
      for (const [ws, ledger] of this.ledgers) {
        expire(ledger, now, true);
        if (ledger.counters.size === 0 && ledger.held.size === 0 && ledger.settled.size === 0) this.ledgers.delete(ws);
      }
    }
    let ledger = this.ledgers.get(workspace);
    if (ledger === undefined) {
      ledger = { counters: new Map(), held: new Map(), settled: new Set() };
      this.ledgers.set(workspace, ledger);
    } else {
      expire(ledger, now, false);
    }
    return ledger;
  }
}

function totals(ledger: Ledger, period: Period, now: number): Totals {
  const day = live(ledger.counters.get(period.day), now);
  const month = live(ledger.counters.get(period.month), now);
  return {
    spentDay: day?.spent ?? 0,
    reservedDay: day?.reserved ?? 0,
    spentMonth: month?.spent ?? 0,
    reservedMonth: month?.reserved ?? 0,
  };
}

function live(counter: Counter | undefined, now: number): Counter | undefined {
  return counter !== undefined && counter.expiresAt > now ? counter : undefined;
}

/** Adds to the period's day and month counters; a period whose counters have expired takes nothing. */
function add(ledger: Ledger, kind: 'spent' | 'reserved', period: Period, micros: number, now: number): void {
  for (const [id, expiresAt] of [
    [period.day, period.dayEndsAt + COUNTER_GRACE_MS],
    [period.month, period.monthEndsAt + COUNTER_GRACE_MS],
  ] as const) {
    if (expiresAt <= now) continue;
    let counter = live(ledger.counters.get(id), now);
    if (counter === undefined) ledger.counters.set(id, (counter = { spent: 0, reserved: 0, expiresAt }));
    counter[kind] += micros;
  }
}

/** Releases what a reservation holds from its day and month, never below zero. */
function take(ledger: Ledger, reservation: Reservation, now: number): void {
  for (const id of [reservation.period.day, reservation.period.month]) {
    const counter = live(ledger.counters.get(id), now);
    if (counter !== undefined) counter.reserved = Math.max(0, counter.reserved - reservation.micros);
  }
}

/** Releases reservations whose TTL is up (and, when asked, drops expired counters). */
function expire(ledger: Ledger, now: number, counters: boolean): void {
  for (const [id, reservation] of ledger.held) {
    if (reservation.expiresAt > now) break;
    ledger.held.delete(id);
    take(ledger, reservation, now);
  }
  if (counters) for (const [id, counter] of ledger.counters) if (counter.expiresAt <= now) ledger.counters.delete(id);
}
