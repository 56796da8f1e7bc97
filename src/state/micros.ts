/**
 * Budgets count integer micro-dollars (1 USD = 1,000,000), so sums of many small costs never
 * drift the way floating-point dollars do. USD appears only at the module boundary.
 */
export const MICROS_PER_USD = 1_000_000;

/** USD → micro-dollars, rounded to the nearest micro-dollar. A negative or non-finite amount is a caller bug. */
export function toMicros(usd: number, what: string): number {
  const micros = Math.round(usd * MICROS_PER_USD);
  if (!Number.isFinite(usd) || usd < 0 || micros > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`${what} must be a finite amount of USD ≥ 0 (got ${usd})`);
  }
  return micros;
}

export function toUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}
