import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { RuntimeConfig } from '../../config/runtime.js';
import type { Logger } from '../../lib/logger.js';
import { RpcChannel } from '../../lib/rpc.js';
import { withTimeout } from '../../lib/timeout.js';
import { asBuffer } from '../../lib/bytes.js';
import type { LocalSessionJudge } from '../../policy/anomaly/sessions.js';
import type { Store } from '../../state/index.js';
import type { TraceSink } from '../../traces/sink.js';
import type { HoldsService } from '../holds-client.js';
import { ProxyMetrics } from '../metrics.js';
import type { ClusterView, ProxyServer } from '../server.js';
import type { HubApi, ThreadApi, ThreadData } from './api.js';
import { BusyWatch } from './busy-watch.js';
import { IdleCores } from './idle-cores.js';

// Running from source (tests) the thread is TypeScript too; workers inherit the loader in execArgv.
const THREAD_URL = new URL(import.meta.url.endsWith('.ts') ? './thread.ts' : './thread.js', import.meta.url);

/** How long `/health` and `/metrics` wait for a thread's part before answering without it. */
const STATE_TIMEOUT_MS = 2000;
const noAnswer = (ms: number) => new Error(`no answer in ${ms} ms`);
/** A thread that died is started again, at most once in this long. */
const RESTART_BACKOFF_MS = 1000;

export interface IoThreadGroupOptions {
  /** The main thread's own server (not yet listening). */
  readonly server: ProxyServer;
  /** I/O threads started at once, this one included. */
  readonly initial: number;
  /** The most I/O threads, this one included: more start while the main thread stays busy and a core is idle (BusyWatch). */
  readonly max: number;
  readonly host: string;
  /** The port claimed for the process (claimPort). */
  readonly port: number;
  readonly config: RuntimeConfig;
  readonly inspectionThreads: number;
  readonly decideRoot: string;
  readonly store: Store;
  readonly sink: TraceSink;
  readonly holds: HoldsService | undefined;
  readonly sessions: LocalSessionJudge;
  readonly logger: Logger;
  /** The thread's module; tests substitute one that crashes. */
  readonly threadUrl?: URL;
}

interface IoThread {
  readonly index: number;
  readonly worker: Worker;
  readonly channel: RpcChannel<ThreadApi>;
  inflight: number;
}

/**
 * The proxy's I/O threads seen from the main thread, which is the first of them and owns what
 * they share: the store, the trace sink, holds and session memories (the hub). Configs go to every
 * thread; `/health` and `/metrics` sum them. A thread that dies is started again.
 */
export class IoThreadGroup implements ClusterView {
  private readonly threads = new Map<number, IoThread>();
  private readonly server: ProxyServer;
  private config: RuntimeConfig;
  private closing = false;
  private readonly handlers: HubApi;
  private readonly growth: NodeJS.Timeout | undefined;
  /** Threads being started: they count towards `max`. */
  private readonly spawning = new Set<number>();
  /** What a starting thread's `ready` settles, by thread index. */
  private readonly readiness = new Map<number, (error: string | null) => void>();

  private constructor(private readonly options: IoThreadGroupOptions) {
    this.config = options.config;
    this.server = options.server;
    if (options.max > options.initial) this.growth = this.watchLoad();
    const { store, sink, holds, sessions } = options;
    const noHolds = () => Promise.reject(new Error('holds are not recorded: no control plane'));
    this.handlers = {
      countCall: (req) => store.countCall(req),
      reserve: (req) => store.reserve(req),
      settle: (req) => store.settle(req),
      release: (req) => store.release(req),
      snapshot: (workspace, now) => store.snapshot(workspace, now),
      cacheGet: (workspace, key) => store.cacheGet(workspace, key),
      cacheSet: (workspace, key, value, ttlMs) => store.cacheSet(workspace, key, asBuffer(value), ttlMs),
      trace: (trace) => sink.record(trace),
      inflight: (index, count) => {
        const thread = this.threads.get(index);
        if (thread !== undefined) thread.inflight = count;
      },
      decideSession: (key, policy, report, shadow) => sessions.decide(key, policy, report, shadow),
      holdApproval: (scope, key, ctx) => holds?.ledger(scope).approval(key, ctx) ?? noHolds(),
      holdRecord: (scope, request) => holds?.ledger(scope).record(request) ?? noHolds(),
      holdBypassUsed: (scope, bypass, call, ctx) => holds?.ledger(scope).bypassUsed?.(bypass, call, ctx),
      holdReport: (reports, ctx) => holds?.report(reports, ctx) ?? noHolds(),
      recordKill: (trace) => holds?.recordKill(trace) ?? Promise.resolve(null),
      health: () => this.health(),
      metrics: () => this.metrics(),
      ready: (index, error) => this.readiness.get(index)?.(error),
    };
  }

  /** Starts the other `initial - 1` threads; resolves when every one listens. */
  static async start(options: IoThreadGroupOptions): Promise<IoThreadGroup> {
    const group = new IoThreadGroup(options);
    try {
      await Promise.all(Array.from({ length: options.initial - 1 }, (_, i) => group.spawn(i + 1)));
    } catch (err) {
      await group.close(0);
      throw err;
    }
    return group;
  }

  get size(): number {
    return this.threads.size + 1;
  }

  /** The main thread's requests in flight, and each other thread's as it last reported. */
  get inflightCount(): number {
    let count = this.server.inflightCount;
    for (const thread of this.threads.values()) count += thread.inflight;
    return count;
  }

  /** Applies a config on every thread (the main one first); resolves when all have it. */
  async setConfig(config: RuntimeConfig): Promise<void> {
    this.config = config;
    await this.server.setConfig(config);
    const results = await Promise.allSettled([...this.threads.values()].map((t) => t.channel.call('setConfig', config)));
    for (const r of results) if (r.status === 'rejected') this.options.logger.error({ err: r.reason }, 'an I/O thread could not apply the config');
  }

  async health(): Promise<Record<string, unknown>> {
    const server = this.server;
    const others = await this.fromThreads((t) => t.channel.call('state'));
    return server.healthBody([server.threadState(), ...others]);
  }

  async metrics(): Promise<{ contentType: string; body: string }> {
    const [own, others] = await Promise.all([this.server.metricsSnapshot(), this.fromThreads((t) => t.channel.call('metrics'))]);
    return ProxyMetrics.aggregate([own, ...others]);
  }

  /** Drains every other thread (at most `drainMs`) and lets them exit. */
  async close(drainMs: number): Promise<void> {
    this.closing = true;
    clearInterval(this.growth);
    await Promise.all(
      [...this.threads.values()].map(async (thread) => {
        const exited = new Promise((resolve) => thread.worker.once('exit', resolve));
        await withTimeout(thread.channel.call('close', drainMs), drainMs + STATE_TIMEOUT_MS, noAnswer).catch((err: unknown) =>
          this.options.logger.warn({ err, ioThread: thread.index }, 'an I/O thread did not drain; stopping it'),
        );
        await withTimeout(exited, STATE_TIMEOUT_MS, noAnswer).catch(() => thread.worker.terminate());
      }),
    );
  }

  /**
   * Samples the main thread's event loop and the machine's idle cores each second, and starts a
   * thread while the loop stays busy and a core is free.
   */
  private watchLoad(): NodeJS.Timeout {
    const watch = new BusyWatch();
    const idle = new IdleCores();
    let last = performance.eventLoopUtilization();
    // Said once until a thread starts: a machine saturated for hours would say it every 3 s.
    let declined = false;
    const timer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const verdict = watch.sample(performance.eventLoopUtilization(now, last).utilization, this.server.inflightCount, idle.sample());
      last = now;
      if (verdict === null || this.closing || this.size + this.spawning.size >= this.options.max) return;
      if (verdict === 'no-idle-core') {
        if (!declined) this.options.logger.info({ threads: this.size }, 'the main thread is busy but no core is free: not starting another I/O thread');
        declined = true;
        return;
      }
      declined = false;
      const index = this.freeIndex();
      this.options.logger.info({ ioThread: index, threads: this.size + 1 }, 'the main thread is busy and a core is free: starting another I/O thread');
      this.spawn(index).catch((err: unknown) => this.options.logger.error({ err, ioThread: index }, 'I/O thread could not start'));
    }, 1000);
    timer.unref();
    return timer;
  }

  private freeIndex(): number {
    let index = 1;
    while (this.threads.has(index) || this.spawning.has(index)) index++;
    return index;
  }

  private async fromThreads<T>(ask: (thread: IoThread) => Promise<T>): Promise<T[]> {
    const answers = await Promise.allSettled([...this.threads.values()].map((t) => withTimeout(ask(t), STATE_TIMEOUT_MS, noAnswer)));
    return answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
  }

  private spawn(index: number): Promise<void> {
    this.spawning.add(index);
    return this.startThread(index).finally(() => this.spawning.delete(index));
  }

  private startThread(index: number): Promise<void> {
    const o = this.options;
    const data: ThreadData = {
      index,
      host: o.host,
      port: o.port,
      config: this.config,
      inspectionThreads: o.inspectionThreads,
      decideRoot: o.decideRoot,
      holds: o.holds !== undefined,
      storeKind: o.store.health().kind,
    };
    const worker = new Worker(o.threadUrl ?? THREAD_URL, { workerData: data });
    const channel = new RpcChannel<ThreadApi>(worker, this.handlers);
    const thread: IoThread = { index, worker, channel, inflight: 0 };
    return new Promise((resolve, reject) => {
      let started = false;
      const settle = (error: Error | null) => {
        started = true;
        this.readiness.delete(index);
        if (error === null) resolve();
        else reject(error);
      };
      this.readiness.set(index, (error) => {
        const refused = error ?? (this.closing ? 'the proxy stops' : null);
        if (refused !== null) {
          void worker.terminate();
          settle(new Error(`I/O thread ${index} could not start: ${refused}`));
          return;
        }
        this.threads.set(index, thread);
        // A config applied while the thread started did not reach it.
        if (data.config !== this.config) {
          channel.call('setConfig', this.config).catch((err: unknown) => o.logger.error({ err, ioThread: index }, 'an I/O thread could not apply the config'));
        }
        settle(null);
      });
      worker.on('error', (err) => o.logger.error({ err, ioThread: index }, 'I/O thread failed'));
      worker.once('exit', (code) => {
        channel.close('the I/O thread exited');
        const current = this.threads.get(index) === thread;
        if (current) this.threads.delete(index);
        if (!started) {
          settle(new Error(`I/O thread ${index} exited (code ${code}) before it listened`));
          return;
        }
        if (this.closing || !current) return;
        o.logger.error({ ioThread: index, code }, 'I/O thread exited; starting it again');
        setTimeout(() => {
          if (!this.closing) this.spawn(index).catch((err: unknown) => o.logger.error({ err, ioThread: index }, 'I/O thread could not be started again'));
        }, RESTART_BACKOFF_MS).unref();
      });
    });
  }
}
