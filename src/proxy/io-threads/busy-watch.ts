/** Event-loop utilisation at or above which the main thread counts as busy. */
export const BUSY_UTILIZATION = 0.75;
/** Consecutive busy seconds before another I/O thread starts. */
export const BUSY_SECONDS = 3;
/**
 * Idle cores, on average over the busy seconds, that another thread needs: with less, the machine
 * is saturated and a second thread only takes turns with the first on the cores there are.
 */
export const IDLE_CORES_NEEDED = 0.5;

/** What a run of busy seconds decided: start a thread, or not, for want of a free core. */
export type BusyVerdict = 'start' | 'no-idle-core';

/**
 * Decides when `--io-threads auto` starts another thread: when the main thread's event loop has
 * been busy (utilisation at or above the threshold) with more than one request in flight, for
 * `sustain` samples in a row, and the machine had a core to spare meanwhile. A burst shorter than
 * that does not pay for a thread (about 50 MB and a second of start-up), one busy request (a long
 * stream) would not move to it, and on a machine whose cores are all busy (the proxy sharing them
 * with its clients or its upstream) two threads serve less than one, for more CPU a request.
 */
export class BusyWatch {
  private busyFor = 0;
  private idleSum = 0;

  constructor(
    private readonly threshold = BUSY_UTILIZATION,
    private readonly sustain = BUSY_SECONDS,
    private readonly idleNeeded = IDLE_CORES_NEEDED,
  ) {}

  /**
   * One second's sample: the main thread's utilisation (0–1), the requests in flight, and the
   * machine's idle cores. A verdict once a run of busy samples is complete, else null.
   */
  sample(utilization: number, inflight: number, idleCores: number): BusyVerdict | null {
    if (utilization < this.threshold || inflight <= 1) {
      this.busyFor = 0;
      this.idleSum = 0;
      return null;
    }
    this.busyFor++;
    this.idleSum += idleCores;
    if (this.busyFor < this.sustain) return null;
    const idle = this.idleSum / this.busyFor;
    this.busyFor = 0;
    this.idleSum = 0;
    return idle >= this.idleNeeded ? 'start' : 'no-idle-core';
  }
}
