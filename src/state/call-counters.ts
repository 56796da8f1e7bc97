import type { CallCountRequest, CallCountResult } from './store.js';

interface Counter {
  count: number;
  expiresAt: number;
}

/** Counters kept before the expired ones are swept out. */
const SWEEP_FROM = 10_000;

/**
 * Call counters kept in this process: the embedded store's, and a Redis store's while Redis cannot
 * be reached. Each counter lives until its period ends.
 */
export class CallCounters {
  /**
   * The size past which expired counters are swept: twice what was live after the last sweep, so
   * that counters which are all live are not walked again on every call.
   */
  private sweepAbove = SWEEP_FROM;

  constructor(private readonly counts = new Map<string, Counter>()) {}

  count(req: CallCountRequest, degraded: boolean): CallCountResult {
    const key = (k: string) => `${req.workspace}\u0000${k}`;
    const current = req.counters.map((c) => {
      const entry = this.counts.get(key(c.key));
      return entry === undefined || entry.expiresAt <= req.now ? 0 : entry.count;
    });
    const exceeded = req.counters.findIndex((c, i) => current[i]! >= c.limit);
    if (exceeded !== -1) return { exceeded, counts: current, degraded };
    req.counters.forEach((c, i) => this.counts.set(key(c.key), { count: current[i]! + 1, expiresAt: c.expiresAt }));
    if (this.counts.size > this.sweepAbove) {
      this.forgetExpired(req.now);
      this.sweepAbove = Math.max(SWEEP_FROM, 2 * this.counts.size);
    }
    return { exceeded: null, counts: current.map((n) => n + 1), degraded };
  }

  private forgetExpired(now: number): void {
    for (const [k, entry] of this.counts) if (entry.expiresAt <= now) this.counts.delete(k);
  }
}
