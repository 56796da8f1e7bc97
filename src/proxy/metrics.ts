import { AggregatorRegistry, Gauge, Registry, collectDefaultMetrics, type Aggregator } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './metric-series.js';
import type { TraceRecord } from '../traces/trace.js';

/**
 * How often the event-loop lag metrics sample the loop. prom-client's 10 ms wakes an idle proxy
 * about 100 times a second, on a developer's machine as on a server:
 * 0.57% of a core doing nothing against 0.17% at 100 ms, which still records every stall of 100 ms
 * or more (a shorter one only when a sample falls in it).
 */
const EVENT_LOOP_SAMPLE_MS = 100;

/** One thread's metric values (prom-client's JSON form), as sent to the thread that renders them all. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** What `/metrics` reads at scrape time; nothing of it is touched per request. */
export interface MetricsSources {
  engine(): { threads: number; running: number; completed: number; workerFailures: number };
  store(): { kind: 'memory' | 'redis'; connected: boolean; pendingSettlements?: number; droppedSettlements?: number };
  wasm(): { rules: number; failed: number; fuelExhausted: number; remembered: number };
  tracesDropped(): number;
  inflight(): number;
}

// Proxy time is tens of µs to a few ms; upstream time is ms to minutes.
const OVERHEAD_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The proxy's Prometheus metrics. Labels are bounded by construction: the route (the proxy's own
 * paths, anything else is `other`), the enforcement, the status class and the provider id — never
 * a model name, key, workspace or session a client chose. Each label set's series is kept, so
 * counting a request is a few map look-ups on the settled trace.
 */
export class ProxyMetrics {
  readonly registry = new Registry();
  private readonly requests: SeriesCounter;
  private readonly overhead: SeriesHistogram;
  private readonly upstream: SeriesHistogram;
  private readonly tokens: SeriesCounter;
  private readonly cost: SeriesCounter;

  /**
   * `processWide` (the main thread) adds what one process has once: Node's process metrics, the
   * store's and the trace sink's. Other I/O threads leave them out, and their metrics are summed
   * with the main thread's (see `aggregate`).
   */
  constructor(
    private readonly knownRoutes: ReadonlySet<string>,
    sources: MetricsSources,
    processWide = true,
  ) {
    const registers = [this.registry];
    const registry = this.registry;
    this.requests = new SeriesCounter('svc_requests_total', 'Requests answered, by route, enforcement and status class.', ['route', 'enforcement', 'status'], registry);
    this.overhead = new SeriesHistogram(
      'svc_overhead_seconds',
      "The proxy's own time up to the status line, the upstream's wait excluded (x-svc-overhead-ms).",
      ['route', 'stream'],
      OVERHEAD_BUCKETS,
      registry,
    );
    this.upstream = new SeriesHistogram('svc_upstream_seconds', 'Time spent on the upstream: the request to its last byte, less the proxy overhead.', ['provider', 'stream'], UPSTREAM_BUCKETS, registry);
    this.tokens = new SeriesCounter('svc_tokens_total', 'Tokens metered, by provider and direction (input, output).', ['provider', 'direction'], registry);
    this.cost = new SeriesCounter('svc_cost_usd_total', 'Spend metered in US dollars, by provider.', ['provider'], registry);
    // Loaded rules are the same in every thread: the aggregate takes the largest count, not the sum.
    const gauge = (name: string, help: string, read: () => number, aggregator: Aggregator = 'sum') =>
      new Gauge({
        name,
        help,
        registers,
        aggregator,
        collect() {
          this.set(read());
        },
      });
    gauge('svc_inflight_requests', 'Requests being answered now.', () => sources.inflight());
    gauge('svc_inspection_workers', 'Inspection worker threads running.', () => sources.engine().running);
    gauge('svc_inspection_tasks_completed', 'Inspection tasks the worker pool has completed.', () => sources.engine().completed);
    gauge('svc_inspection_worker_failures', 'Inspection worker failures since start.', () => sources.engine().workerFailures);
    gauge('svc_wasm_rules_loaded', 'WASM rules loaded.', () => sources.wasm().rules, 'max');
    gauge('svc_wasm_rules_failed', 'WASM rule files that failed to load.', () => sources.wasm().failed, 'max');
    gauge('svc_wasm_rule_runs_out_of_fuel', 'WASM rule runs stopped because they ran out of fuel.', () => sources.wasm().fuelExhausted);
    gauge('svc_wasm_verdicts_remembered', 'WASM rule evaluations answered from the verdict the rule reached before on the same answers.', () => sources.wasm().remembered);
    if (!processWide) return;
    gauge('svc_store_up', 'Whether the shared store (Redis) answers: 1, or 0 while degraded; 1 for the embedded store.', () => (sources.store().connected ? 1 : 0));
    gauge('svc_store_pending_settlements', 'Settlements waiting to be replayed into the shared store.', () => sources.store().pendingSettlements ?? 0);
    gauge('svc_store_dropped_settlements', 'Settlements lost because the replay queue was full.', () => sources.store().droppedSettlements ?? 0);
    gauge('svc_traces_dropped', 'Trace records dropped because a bound was hit (each one was logged).', () => sources.tracesDropped());
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_', eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }

  /** Counts a settled request from its trace. */
  observe(trace: TraceRecord): void {
    const route = this.knownRoutes.has(trace.route) ? trace.route : 'other';
    const status = trace.status >= 100 ? `${Math.floor(trace.status / 100)}xx` : 'none';
    const stream = trace.stream ? 'true' : 'false';
    this.requests.series(route, trace.enforcement, status).inc();
    if (trace.overheadMs !== null) this.overhead.series(route, stream).observe(trace.overheadMs / 1000);
    const provider = trace.provider;
    if (provider === null) return;
    if (trace.overheadMs !== null && trace.ttfbMs !== null) {
      const upstreamSeconds = Math.max(0, trace.latencyMs - trace.overheadMs) / 1000;
      this.upstream.series(provider, stream).observe(upstreamSeconds);
    }
    if (trace.inputTokens) this.tokens.series(provider, 'input').inc(trace.inputTokens);
    if (trace.outputTokens) this.tokens.series(provider, 'output').inc(trace.outputTokens);
    if (trace.costUsd) this.cost.series(provider).inc(trace.costUsd);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** This registry's values, for a thread that renders every thread's. */
  snapshot(): Promise<MetricsSnapshot> {
    return this.registry.getMetricsAsJSON();
  }

  /** The exposition of several threads' snapshots: counters, histograms and most gauges summed. */
  static async aggregate(snapshots: readonly MetricsSnapshot[]): Promise<{ contentType: string; body: string }> {
    const registry = AggregatorRegistry.aggregate(snapshots as object[]);
    return { contentType: registry.contentType, body: await registry.metrics() };
  }
}
