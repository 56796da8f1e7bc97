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
