import type { RuleAction, RuleContext } from './abi.js';
import { RuleInstance, Subject } from './instance.js';
import { declaredMemory } from './module-memory.js';
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

/** Instances by module hash: a rule set change recompiles only the rules that changed. */
const instances = new Map<string, RuleInstance>();
let liveVersion = '';

function instanceFor(set: RuleSetSnapshot, ref: RuleRef, capPages: number): RuleInstance {
  const key = `${ref.sha256}/${capPages}`;
  let instance = instances.get(key);
  if (instance === undefined) {
    const bytes = new Uint8Array(set.blob, ref.offset, ref.length).slice();
    instance = new RuleInstance(new WebAssembly.Module(bytes), declaredMemory(bytes), capPages);
    instances.set(key, instance);
  }
  return instance;
}

/** Drops instances of rules no longer in the set, once the set changes. */
function forgetRemoved(set: RuleSetSnapshot, capPages: number): void {
  if (set.version === liveVersion) return;
  liveVersion = set.version;
  const keep = new Set(set.rules.map((r) => `${r.sha256}/${capPages}`));
  for (const key of instances.keys()) if (!keep.has(key)) instances.delete(key);
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
  forgetRemoved(task.set, task.memoryCapPages);
  const subject = new Subject(task.context);
  const failures: RuleFailure[] = [];
  const rules = task.set.rules;
  for (let i = task.startAt; i < rules.length; i++) {
    markStart(progress, i);
    const ref = rules[i]!;
    try {
      const outcome = instanceFor(task.set, ref, task.memoryCapPages).evaluate(subject);
      if (outcome.action !== 'allow') return { verdict: { index: i, action: outcome.action, reason: outcome.reason, failed: false }, failures };
    } catch (err) {
      // A trapped instance may hold corrupt state: the next evaluation starts from a fresh one.
      instances.delete(`${ref.sha256}/${task.memoryCapPages}`);
      const error = describe(err);
      failures.push({ index: i, error });
      if (task.failurePolicy === 'closed') return { verdict: { index: i, action: 'block', reason: `rule failed: ${error}`, failed: true }, failures };
    }
  }
  return { verdict: null, failures };
}

export function checkRules(task: CheckTask): Array<string | null> {
  const progress = new Float64Array(task.progress);
  return task.set.rules.map((ref, i) => {
    markStart(progress, i);
    try {
      instanceFor(task.set, ref, task.memoryCapPages);
      return null;
    } catch (err) {
      return describe(err);
    }
  });
}
