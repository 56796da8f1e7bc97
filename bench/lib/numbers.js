// @ts-check
/**
 * `value` to `digits` decimal places, for the figures the bench reports.
 * @param {number} value
 * @param {number} digits
 */
export function round(value, digits) {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

/**
 * The median of `sorted` (ascending, not empty).
 * @param {number[]} sorted
 */
export function median(sorted) {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? /** @type {number} */ (sorted[mid]) : (/** @type {number} */ (sorted[mid - 1]) + /** @type {number} */ (sorted[mid])) / 2;
}
