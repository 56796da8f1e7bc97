import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { declaredMemory, type DeclaredMemory } from './module-memory.js';
import type { RuleRef, RuleSetSnapshot } from './snapshot.js';

/** A rule module in its metered form, compiled (no code of it has run), or why it has none. */
export type MeteredModule = { readonly module: WebAssembly.Module; readonly memory: DeclaredMemory | null } | { readonly error: string };

/** What the metering process is asked and answers (meter-process.ts). */
export interface MeterRequest {
  readonly id: number;
  readonly bytes: Uint8Array;
}
export type MeterReply = { readonly ready: true } | { readonly id: number; readonly bytes: Uint8Array } | { readonly id: number; readonly error: string };

/**
 * How long metering one module may take once binaryen is loaded. Metering is linear in the
 * module's size (tens of ms for the example rules); the bound is for a module that makes binaryen
 * misbehave, so that loading never hangs.
 */
export const METER_DEADLINE_MS = 10_000;
/** Metered modules kept by hash, across rule sets and runners (oldest dropped first). */
export const METERED_MODULES_KEPT = 256;
/** The metering process exits once idle this long. */
const IDLE_MS = 30_000;
/** How long the metering process may take to start (loading binaryen takes about a second on an idle machine). */
const STARTUP_DEADLINE_MS = 120_000;

const ENTRY = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './meter-process.ts' : './meter-process.js', import.meta.url));
/**
 * The flags of this process the metering process takes: those that decide how modules are loaded
 * (the tests' TypeScript loader), with their values. Not profilers or inspectors, which would write
 * over this process's output or port.
 */
const LOADER_FLAG = /^(--import|--require|-r|--loader|--experimental-loader|--conditions|-C)(=.*)?$/;

function loaderFlags(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const match = LOADER_FLAG.exec(execArgv[i]!);
    if (match === null) continue;
    kept.push(execArgv[i]!);
    if (match[2] === undefined && i + 1 < execArgv.length) kept.push(execArgv[++i]!);
  }
  return kept;
}

const cache = new Map<string, MeteredModule>();
const inFlight = new Map<string, Promise<MeteredModule>>();
/** Modules dropped from the cache so far: a set found metered stays so while this is unchanged. */
let evictions = 0;

/** The metered form of a module by the hash of its original bytes, if it has been metered. */
export function meteredModule(sha256: string): MeteredModule | undefined {
  return cache.get(sha256);
}

/** How many metered modules the cache has dropped: until it drops another, a module found in it stays there. */
export function meteredEvictions(): number {
  return evictions;
}

/**
 * The metered form of each rule of `set`, metering those not metered yet in a child process
 * shared by this one (started on demand, gone when idle). Never rejects: a module that cannot be
 * metered answers why (and is remembered, unless the metering process itself failed).
 */
export function meterRules(set: RuleSetSnapshot): Promise<MeteredModule[]> {
  return Promise.all(set.rules.map((ref) => cache.get(ref.sha256) ?? meterOne(set, ref)));
}

function meterOne(set: RuleSetSnapshot, ref: RuleRef): Promise<MeteredModule> {
  let running = inFlight.get(ref.sha256);
  if (running === undefined) {
    const bytes = new Uint8Array(set.blob, ref.offset, ref.length).slice();
    running = meterer.meter(bytes)
      .then(({ outcome, lasting }) => {
        const metered: MeteredModule = 'error' in outcome ? outcome : compile(outcome.bytes);
        if (lasting) {
          while (cache.size >= METERED_MODULES_KEPT) {
            cache.delete(cache.keys().next().value!);
            evictions++;
          }
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

type Outcome = { readonly bytes: Uint8Array } | { readonly error: string };
interface Task {
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly done: (result: { outcome: Outcome; lasting: boolean }) => void;
}

/**
 * The metering process: binaryen is a 14 MB module that takes about a second and 100 MB to load,
 * which a long-running proxy should not keep (memory a thread gives back is not all returned to
 * the system), so it runs in a child process, one module at a time, started when there is work
 * and ended when idle. `lasting` is false when the process failed or overran rather than the
 * module being refused: another attempt may succeed.
 */
class Meterer {
  private child: ChildProcess | null = null;
  private ready = false;
  private readonly queue: Task[] = [];
  private running: Task | null = null;
  private deadline: NodeJS.Timeout | null = null;
  private idle: NodeJS.Timeout | null = null;
  private nextId = 1;

  meter(bytes: Uint8Array): Promise<{ outcome: Outcome; lasting: boolean }> {
    return new Promise((done) => {
      this.queue.push({ id: this.nextId++, bytes, done });
      this.pump();
    });
  }

  private pump(): void {
    if (this.running !== null || this.queue.length === 0) return;
    if (this.idle !== null) clearTimeout(this.idle);
    this.idle = null;
    const child = this.child ?? this.start();
    if (!this.ready) return;
    const task = this.queue.shift()!;
    this.running = task;
    // Waiting for an answer keeps this process alive, as any pending I/O would.
    child.ref();
    (child.channel as { ref?: () => void } | null | undefined)?.ref?.();
    this.deadline = setTimeout(() => this.fail(`metering it took longer than ${METER_DEADLINE_MS / 1000} s and was stopped`), METER_DEADLINE_MS);
    child.send({ id: task.id, bytes: task.bytes } satisfies MeterRequest);
  }

  private start(): ChildProcess {
    const child = fork(ENTRY, [], {
      execArgv: loaderFlags(process.execArgv),
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.child = child;
    this.ready = false;
    const startup = setTimeout(() => {
      if (this.child === child && !this.ready) this.abandon(child, `its metering process did not start within ${STARTUP_DEADLINE_MS / 1000} s`);
    }, STARTUP_DEADLINE_MS).unref();
    child.on('message', (reply: MeterReply) => {
      if ('ready' in reply) {
        clearTimeout(startup);
        this.ready = true;
      } else if (this.running !== null && reply.id === this.running.id) {
        this.finish({ outcome: 'error' in reply ? { error: reply.error } : { bytes: new Uint8Array(reply.bytes) }, lasting: true });
      }
      this.pump();
      this.rest();
    });
    child.on('exit', (code, signal) => {
      clearTimeout(startup);
      if (this.child !== child) return;
      const why = `its metering process ended (${signal ?? `exit code ${code}`})`;
      // One that ends before it is ready would end again: the modules waiting fail instead.
      if (!this.ready) return this.abandon(child, why);
      this.child = null;
      this.ready = false;
      if (this.running !== null) this.finish({ outcome: { error: why }, lasting: false });
      this.pump();
    });
    child.on('error', () => undefined);
    return child;
  }

  private finish(result: { outcome: Outcome; lasting: boolean }): void {
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
    const task = this.running!;
    this.running = null;
    task.done(result);
  }

  /** Stops the process for good: the module it was metering fails; the next ones start a new one. */
  private fail(error: string): void {
    const child = this.child;
    this.child = null;
    this.ready = false;
    child?.kill('SIGKILL');
    this.finish({ outcome: { error }, lasting: false });
    this.pump();
  }

  /** Gives up on a process that could not start: every module waiting fails, for now. */
  private abandon(child: ChildProcess, error: string): void {
    child.kill('SIGKILL');
    this.child = null;
    this.ready = false;
    for (const task of this.queue.splice(0)) task.done({ outcome: { error }, lasting: false });
  }

  /** With nothing to do, the process does not keep this one alive, and ends after IDLE_MS. */
  private rest(): void {
    if (this.running !== null || this.queue.length > 0 || this.child === null) return;
    const child = this.child;
    child.unref();
    (child.channel as { unref?: () => void } | null | undefined)?.unref?.();
    this.idle ??= setTimeout(() => {
      this.idle = null;
      if (this.child === child && this.running === null && this.queue.length === 0) child.disconnect();
    }, IDLE_MS).unref();
  }
}

const meterer = new Meterer();
