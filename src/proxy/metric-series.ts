import type { Metric, Registry } from 'prom-client';

type Sample = { labels: Record<string, string | number>; value: number; metricName?: string };

/**
 * A Prometheus counter or histogram whose series are plain objects the caller keeps: counting is an
 * addition, with no label hashing or validation per call (prom-client's own metrics do both on
 * every `inc` and `observe`, about 1.5 µs a request here). It registers itself with a prom-client
 * Registry and answers `get()` in prom-client's form, so the registry renders it and
 * `AggregatorRegistry` sums it across threads like any other metric.
 */
abstract class SeriesMetric<S> {
  readonly aggregator = 'sum';
  private readonly all = new Map<string, { readonly labels: Readonly<Record<string, string>>; readonly state: S }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  /** The series of these label values (in `labelNames` order), made on first use; keep it. */
  series(...values: string[]): S {
    const key = values.join('\u0000');
    let entry = this.all.get(key);
    if (entry === undefined) {
      if (values.length !== this.labelNames.length) throw new RangeError(`${this.name} has labels ${this.labelNames.join(', ')}`);
      entry = { labels: Object.fromEntries(this.labelNames.map((n, i) => [n, values[i]!])), state: this.fresh() };
      this.all.set(key, entry);
    }
    return entry.state;
  }

  get(): { name: string; help: string; type: string; values: Sample[]; aggregator: string } {
    const values: Sample[] = [];
    for (const { labels, state } of this.all.values()) this.samples(labels, state, values);
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.all.clear();
  }

  protected abstract fresh(): S;
  protected abstract samples(labels: Readonly<Record<string, string>>, state: S, out: Sample[]): void;
}

export class CounterSeries {
  value = 0;

  inc(by = 1): void {
    this.value += by;
  }
}

export class SeriesCounter extends SeriesMetric<CounterSeries> {
  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    super(name, help, 'counter', labelNames, registry);
  }

  protected fresh(): CounterSeries {
    return new CounterSeries();
  }

  protected samples(labels: Readonly<Record<string, string>>, state: CounterSeries, out: Sample[]): void {
    out.push({ labels: { ...labels }, value: state.value });
  }
}

export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class SeriesHistogram extends SeriesMetric<HistogramSeries> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, 'histogram', labelNames, registry);
  }

  protected fresh(): HistogramSeries {
    return new HistogramSeries(this.bounds);
  }

  protected samples(labels: Readonly<Record<string, string>>, state: HistogramSeries, out: Sample[]): void {
    const bucket = `${this.name}_bucket`;
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += state.counts[i]!;
      out.push({ labels: { ...labels, le }, value: cumulative, metricName: bucket });
    });
    out.push({ labels: { ...labels, le: '+Inf' }, value: state.count, metricName: bucket });
    out.push({ labels: { ...labels }, value: state.sum, metricName: `${this.name}_sum` });
    out.push({ labels: { ...labels }, value: state.count, metricName: `${this.name}_count` });
  }
}
