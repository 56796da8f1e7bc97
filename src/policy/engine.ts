import { Piscina } from 'piscina';
import { GovernanceUnavailableError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { enginesFor } from './engines.js';
import type { PolicyConfig } from './policy-config.js';
import type { RequestBodyResult, RequestBodyTask } from './request-task.js';
import { inspectParsed, type InspectionResult, type InspectionTask } from './task.js';

export interface PolicyEngineOptions {
  threads: number;
  /**
   * Bodies up to this size are inspected on the main thread: a worker round trip costs more
   * than scanning them (see the `inspect-inline-vs-worker` micro-benchmark).
   */
  inlineMaxBytes: number;
  logger: Logger;
  /** The worker module; tests substitute one that crashes. */
  workerUrl?: URL;
}

export interface EngineState {
  threads: number;
  running: number;
  completed: number;
  workerFailures: number;
}

// Running from source (tests) the worker is TypeScript too; workers inherit the loader in execArgv.
const DEFAULT_WORKER = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);

/**
 * Runs inspections: inline for small bodies, on a Piscina pool for the rest. A worker that dies
 * under a task gets the task retried once on a fresh worker; a second failure fails the request
 * closed with 503 governance_unavailable.
 */
export class PolicyEngine {
  private readonly pool: Piscina<InspectionTask | RequestBodyTask, InspectionResult | RequestBodyResult>;
  private workerFailures = 0;

  constructor(private readonly options: PolicyEngineOptions) {
    // Workers start with the first body too large to inspect inline and stop after a minute
    // idle: each holds its own copy of the detectors (about 38 MB), and most traffic never
    // needs one.
    this.pool = new Piscina({
      filename: (options.workerUrl ?? DEFAULT_WORKER).href,
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: 60_000,
    });
    // A worker dying is handled per task; the pool's own error event must not crash the process.
    this.pool.on('error', (err: unknown) => options.logger.error({ err }, 'policy worker error'));
  }

  /**
   * Inspects `parsed`, the parse of `raw`. Inline inspection rewrites `parsed` in place; either
   * way a modified body comes back as UTF-8 bytes in `body`, which may be written over `raw`'s
   * own bytes (inspectParsed): what is sent on is `body`, never `raw` again.
   */
  async inspect(policy: PolicyConfig, parsed: unknown, raw: Buffer): Promise<InspectionResult> {
    if (raw.length <= this.options.inlineMaxBytes) return this.inspectHere(policy, parsed, raw);
    return this.inspectInWorker({ policy, raw });
  }

  /** Whether a request body of this size is parsed and inspected in a worker (`parseRequestBody`) rather than on the main thread. */
  parsesInWorker(bytes: number): boolean {
    return bytes > this.options.inlineMaxBytes;
  }

  /**
   * Parses and inspects a whole request body in a worker; the main thread gets its top-level
   * scalar fields, the verdict, and the cache key and rule text when asked for.
   */
  parseRequestBody(task: RequestBodyTask): Promise<RequestBodyResult> {
    return this.runInWorker(task, 'requestBody') as Promise<RequestBodyResult>;
  }

  /** Inspects on this thread; a failure of the engine is 503 `governance_unavailable`. */
  readonly inspectHere = (policy: PolicyConfig, parsed: unknown, raw: Uint8Array): InspectionResult => {
    try {
      return inspectParsed(policy, parsed, raw);
    } catch (err) {
      this.options.logger.error({ err }, 'inline inspection failed');
      throw new GovernanceUnavailableError('the policy engine failed', err);
    }
  };

  private inspectInWorker(task: InspectionTask): Promise<InspectionResult> {
    return this.runInWorker(task, 'default') as Promise<InspectionResult>;
  }

  private async runInWorker(task: InspectionTask | RequestBodyTask, name: string): Promise<InspectionResult | RequestBodyResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pool.run(task, { name });
      } catch (err) {
        this.workerFailures++;
        this.options.logger.error({ err, attempt }, 'policy worker failed a task');
        if (attempt >= 2) throw new GovernanceUnavailableError('a policy worker failed twice', err);
      }
    }
  }

  /**
   * Compiles a new policy on the main thread (workers compile their own copy on first use) and
   * logs, once, the workspace injection patterns RE2 could not compile and the anomaly and
   * injection environment settings that were ignored.
   */
  prepare(policy: PolicyConfig): void {
    for (const reason of policy.anomaly.ignored) this.options.logger.warn({ reason }, 'anomaly setting ignored');
    for (const reason of policy.injection.ignored) this.options.logger.warn({ reason }, 'injection setting ignored');
    for (const d of enginesFor(policy).injection.dropped) {
      this.options.logger.warn({ pattern: d.pattern, reason: d.reason }, 'injection pattern dropped: RE2 cannot compile it');
    }
  }

  state(): EngineState {
    return {
      threads: this.options.threads,
      running: this.pool.threads.length,
      completed: this.pool.completed,
      workerFailures: this.workerFailures,
    };
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
