// @ts-check
/** Timing shared by the micro-benchmarks. */

/**
 * Median wall time of `rounds` calls of `fn`, after one untimed warm-up call.
 * @param {() => void} fn
 * @param {number} [rounds]
 * @returns {number} seconds
 */
export function medianSeconds(fn, rounds = 5) {
  fn();
  /** @type {number[]} */
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    fn();
    times.push((performance.now() - start) / 1000);
  }
  times.sort((a, b) => a - b);
  return /** @type {number} */ (times[Math.floor(rounds / 2)]);
}
