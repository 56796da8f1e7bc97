import { Piscina } from 'piscina';
import { declaredMemory, type DeclaredMemory } from './module-memory.js';
import type { RuleRef, RuleSetSnapshot } from './snapshot.js';

/** A rule module in its metered form, compiled (no code of it has run), or why it has none. */
export type MeteredModule = { readonly module: WebAssembly.Module; readonly memory: DeclaredMemory | null } | { readonly error: string };

/** One module for the metering worker; it stamps `progress` ([0] 1 once started, [1] the time) when binaryen is ready. */
export interface MeterTask {
  readonly bytes: Uint8Array;
  readonly progress: SharedArrayBuffer;
}
export type MeterOutcome = { readonly bytes: Uint8Array } | { readonly error: string };

/**
 * How long metering one module may take once binaryen is loaded. Metering is linear in the
 * module's size (a few ms for the example rules); the bound is for a module that makes binaryen
 * misbehave, so that loading never hangs.
 */
export const METER_DEADLINE_MS = 10_000;
/** Metered modules kept by hash, across rule sets and runners (oldest dropped first). */
const CACHE_LIMIT = 256;
/** The metering worker exits once idle this long, and binaryen's memory (~100 MB) with it. */
const IDLE_MS = 10_000;
const PROGRESS_BYTES = 16;

const WORKER = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);

const cache = new Map<string, MeteredModule>();
const inFlight = new Map<string, Promise<MeteredModule>>();
let pool: Piscina<MeterTask, MeterOutcome> | null = null;
let stopped = 0;

/** The metered form of a module by the hash of its original bytes, if it has been metered. */
export function meteredModule(sha256: string): MeteredModule | undefined {
  return cache.get(sha256);
}

/** Metering workers stopped at their deadline since the process started. */
export function meteringWorkersStopped(): number {
  return stopped;
}

/**
 * The metered form of each rule of `set`, metering those not metered yet in a worker shared by
 * the process (started on demand, gone when idle). Never rejects: a module that cannot be metered
 * answers why (and is remembered, unless the worker itself failed).
 */
export function meterRules(set: RuleSetSnapshot): Promise<MeteredModule[]> {
  return Promise.all(set.rules.map((ref) => cache.get(ref.sha256) ?? meterOne(set, ref)));
}

function meterOne(set: RuleSetSnapshot, ref: RuleRef): Promise<MeteredModule> {
  let running = inFlight.get(ref.sha256);
  if (running === undefined) {
    const bytes = new Uint8Array(set.blob, ref.offset, ref.length).slice();
    running = runTask(bytes)
      .then(({ outcome, lasting }) => {
        const metered: MeteredModule = 'error' in outcome ? outcome : compile(outcome.bytes);
        if (lasting) {
          while (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
          cache.set(ref.sha256, metered);
        }
        return metered;
      })
      .finally(() => inFlight.delete(ref.sha256));
    inFlight.set(ref.sha256, running);
  }
  return running;
}

function compile(bytes: Uint8Array): MeteredModule {
  try {
    return { module: new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>), memory: declaredMemory(bytes) };
  } catch (err) {
    return { error: `its metered form does not compile: ${(err as Error).message}` };
  }
}

/** A one-shot abort in the EventEmitter shape Piscina accepts for `signal`: aborting a running task replaces its worker. */
class TaskAbort {
  private listener: (() => void) | null = null;
  once(_event: 'abort', listener: () => void): void {
    this.listener = listener;
  }
  off(_event: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = null;
  }
  removeListener(event: 'abort', listener: () => void): void {
    this.off(event, listener);
  }
  abort(): void {
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }
}

/** The worker's answer; `lasting` unless the worker failed or overran, which another attempt may not. */
async function runTask(bytes: Uint8Array): Promise<{ outcome: MeterOutcome; lasting: boolean }> {
  pool ??= new Piscina<MeterTask, MeterOutcome>({ filename: WORKER.href, minThreads: 0, maxThreads: 1, idleTimeout: IDLE_MS });
  const shared = new SharedArrayBuffer(PROGRESS_BYTES);
  const progress = new Float64Array(shared);
  const abort = new TaskAbort();
  let overran = false;
  // The clock starts when the worker does (loading binaryen and waiting in the queue do not count).
  const watch = () => {
    const elapsed = progress[0] === 0 ? 0 : Date.now() - progress[1]!;
    if (progress[0] !== 0 && elapsed >= METER_DEADLINE_MS) {
      overran = true;
      abort.abort();
      return;
    }
    timer = setTimeout(watch, progress[0] === 0 ? 100 : METER_DEADLINE_MS - elapsed + 1);
    timer.unref();
  };
  let timer = setTimeout(watch, 100);
  timer.unref();
  try {
    return { outcome: await pool.run({ bytes, progress: shared }, { signal: abort }), lasting: true };
  } catch (err) {
    if (overran) {
      stopped++;
      return { outcome: { error: `metering it took longer than ${METER_DEADLINE_MS / 1000} s and was stopped` }, lasting: false };
    }
    return { outcome: { error: `its metering worker failed: ${(err as Error).message}` }, lasting: false };
  } finally {
    clearTimeout(timer);
  }
}
