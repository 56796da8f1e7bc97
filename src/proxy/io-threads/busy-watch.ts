/** Event-loop utilisation at or above which the main thread counts as busy. */
export const BUSY_UTILIZATION = 0.75;
/** Consecutive busy seconds before another I/O thread starts. */
export const BUSY_SECONDS = 3;

/**
 * Decides when `--io-threads auto` starts another thread: when the main thread's event loop has
 * been busy (utilisation at or above the threshold) with more than one request in flight, for
 * `sustain` samples in a row. A burst shorter than that does not pay for a thread (about 50 MB and
 * a second of start-up), and one busy request (a long stream) would not move to it.
 */
export class BusyWatch {
  private busyFor = 0;

  constructor(
    private readonly threshold = BUSY_UTILIZATION,
    private readonly sustain = BUSY_SECONDS,
  ) {}

  /** One sample of utilisation (0–1) and the requests in flight; true when another thread should start. */
  sample(utilization: number, inflight: number): boolean {
    this.busyFor = utilization >= this.threshold && inflight > 1 ? this.busyFor + 1 : 0;
    if (this.busyFor < this.sustain) return false;
    this.busyFor = 0;
    return true;
  }
}
