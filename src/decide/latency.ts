const WINDOW = 200;

/** The last few hundred latencies of each rule, for its p95. */
export class RuleLatencies {
  private readonly samples = new Map<string, number[]>();

  record(ruleHash: string, ms: number): void {
    let list = this.samples.get(ruleHash);
    if (list === undefined) this.samples.set(ruleHash, (list = []));
    list.push(ms);
    if (list.length > WINDOW) list.shift();
  }

  /** The p95 recorded here, or `fallback` (the pinned eval's) until there are samples. */
  p95(ruleHash: string, fallback: number | undefined): number | undefined {
    const list = this.samples.get(ruleHash);
    if (list === undefined || list.length === 0) return fallback;
    return percentile(list, 0.95);
  }
}

export function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}
