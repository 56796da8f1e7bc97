import type { RuleAction, RuleContext } from './abi.js';
import { RuleInstance, Subject } from './instance.js';
import { declaredMemory, type DeclaredMemory } from './module-memory.js';
import type { RuleRef, RuleSetSnapshot } from './snapshot.js';

export type FailurePolicy = 'closed' | 'open';

/**
 * Where a worker is, for the main thread's deadline watchdog: [0] the 1-based index of the rule
 * running (0 before the first), [1] the wall time it started (ms).
 */
export const PROGRESS_BYTES = 16;

interface TaskBase {
  readonly set: RuleSetSnapshot;
  readonly memoryCapPages: number;
  readonly progress: SharedArrayBuffer;
}

/** Evaluate the rules from `startAt` on, in order; the first non-allow verdict wins. */
export interface EvaluateTask extends TaskBase {
  readonly op: 'evaluate';
  readonly context: RuleContext;
  readonly startAt: number;
  readonly failurePolicy: FailurePolicy;
}

/** Instantiate every rule and check its ABI: one error (or null) per rule. */
export interface CheckTask extends TaskBase {
  readonly op: 'check';
}

export type RuleTask = EvaluateTask | CheckTask;

export interface RuleFailure {
  readonly index: number;
  readonly error: string;
}

export interface EvaluationResult {
  /** The deciding rule, or null when every rule allowed. `failed`: the rule failed and the policy is fail closed. */
  readonly verdict: { readonly index: number; readonly action: Exclude<RuleAction, 'allow'>; readonly reason: string; readonly failed: boolean } | null;
  /** Rules that failed (and, failing open, were skipped). */
  readonly failures: readonly RuleFailure[];
}

/** Compiled modules by hash, and their instances by hash and cap: a rule set change redoes only what changed. */
const modules = new Map<string, { module: WebAssembly.Module; memory: DeclaredMemory | null }>();
const instances = new Map<string, RuleInstance>();
let liveGeneration = '';

const instanceKey = (ref: RuleRef, capPages: number) => `${ref.sha256}/${capPages}`;

/** Compiling runs none of the rule's code, so it happens before the rule's deadline clock starts. */
function compiled(set: RuleSetSnapshot, ref: RuleRef): { module: WebAssembly.Module; memory: DeclaredMemory | null } {
  let entry = modules.get(ref.sha256);
  if (entry === undefined) {
    const bytes = new Uint8Array(set.blob, ref.offset, ref.length).slice();
    entry = { module: new WebAssembly.Module(bytes), memory: declaredMemory(bytes) };
    modules.set(ref.sha256, entry);
  }
  return entry;
}

function instanceFor(set: RuleSetSnapshot, ref: RuleRef, capPages: number, progress: Float64Array, index: number): RuleInstance {
  const key = instanceKey(ref, capPages);
  let instance = instances.get(key);
  if (instance === undefined) {
    progress[0] = 0;
    const { module, memory } = compiled(set, ref);
    markStart(progress, index);
    instance = new RuleInstance(module, memory, capPages);
    instances.set(key, instance);
  }
  markStart(progress, index);
  return instance;
}

/** Drops what belongs to rules no longer loaded, once the generation changes. */
function forgetRemoved(set: RuleSetSnapshot): void {
  if (set.generation === liveGeneration) return;
  liveGeneration = set.generation;
  const live = new Set(set.live);
  for (const sha of modules.keys()) if (!live.has(sha)) modules.delete(sha);
  for (const key of instances.keys()) if (!live.has(key.slice(0, key.indexOf('/')))) instances.delete(key);
}

function markStart(progress: Float64Array, index: number): void {
  progress[1] = Date.now();
  progress[0] = index + 1;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function evaluateRules(task: EvaluateTask): EvaluationResult {
  const progress = new Float64Array(task.progress);
  forgetRemoved(task.set);
  const subject = new Subject(task.context);
  const failures: RuleFailure[] = [];
  const rules = task.set.rules;
  for (let i = task.startAt; i < rules.length; i++) {
    const ref = rules[i]!;
    try {
      const outcome = instanceFor(task.set, ref, task.memoryCapPages, progress, i).evaluate(subject);
      if (outcome.action !== 'allow') return { verdict: { index: i, action: outcome.action, reason: outcome.reason, failed: false }, failures };
    } catch (err) {
      // A trapped instance may hold corrupt state: the next evaluation starts from a fresh one.
      instances.delete(instanceKey(ref, task.memoryCapPages));
      const error = describe(err);
      failures.push({ index: i, error });
      if (task.failurePolicy === 'closed') return { verdict: { index: i, action: 'block', reason: `rule failed: ${error}`, failed: true }, failures };
    }
  }
  return { verdict: null, failures };
}

/** A rule that loaded, with the kinds of call it evaluates; or why it did not. */
export type RuleCheck = { readonly kinds: number } | { readonly error: string };

export function checkRules(task: CheckTask): RuleCheck[] {
  const progress = new Float64Array(task.progress);
  return task.set.rules.map((ref, i) => {
    try {
      return { kinds: instanceFor(task.set, ref, task.memoryCapPages, progress, i).kinds };
    } catch (err) {
      return { error: describe(err) };
    }
  });
}
