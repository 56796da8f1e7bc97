// @ts-check
/** Timing shared by the micro-benchmarks. */

/**
 * Median wall time of `rounds` calls of `fn`, after one untimed warm-up call; `before`, when
 * given, runs untimed before each call.
 * @param {() => void} fn
 * @param {number} [rounds]
 * @param {() => void} [before]
 * @returns {number} seconds
 */
export function medianSeconds(fn, rounds = 5, before) {
  before?.();
  fn();
  /** @type {number[]} */
  const times = [];
  for (let i = 0; i < rounds; i++) {
    before?.();
    const start = performance.now();
    fn();
    times.push((performance.now() - start) / 1000);
  }
  times.sort((a, b) => a - b);
  return /** @type {number} */ (times[Math.floor(rounds / 2)]);
}
