import type { MaybePromise } from '../../lib/maybe-promise.js';
import { unjudgeableVerdict, type ToolCall, type ToolCallContext, type ToolCallJudge, type ToolVerdict } from '../tool-judge.js';
import { KIND_BITS, type RuleContext, type ToolInputForm } from './abi.js';
import type { RuleCheck } from './evaluator.js';
import type { RuleDecision, WasmRuleRunner } from './runner.js';
import { buildSnapshot, type RuleBytes, type RuleSetSnapshot } from './snapshot.js';

const ALLOW: ToolVerdict = { action: 'allow' };

/**
 * The verdicts of a `tool_call` rule set on calls, one each, in order: the proxy's installed rules
 * and a workspace's stored rules (the hook gate) both judge through this. At once once the set's
 * modules are metered (the rules run on this thread); after metering them otherwise. A call no
 * rule can read answers the failure policy; a rule that fails under the closed policy refuses the
 * call, marked as a check that could not complete.
 */
export function judgeWithRuleSet(
  runner: WasmRuleRunner,
  set: RuleSetSnapshot | null,
  calls: readonly ToolCall[],
  ctx: ToolCallContext,
  failClosed: boolean,
): MaybePromise<ToolVerdict[]> {
  if (set === null) return calls.map(() => ALLOW);
  if (runner.ready(set)) {
    return calls.map((call) => (call.input === 'unknown' ? unjudgeableVerdict(call, failClosed, 'wasm') : verdictOf(runner.evaluateNow(set, ruleContext(call, call.input, ctx)))));
  }
  return Promise.all(
    calls.map(async (call) => (call.input === 'unknown' ? unjudgeableVerdict(call, failClosed, 'wasm') : verdictOf(await runner.evaluate(set, ruleContext(call, call.input, ctx))))),
  );
}

function ruleContext(call: ToolCall, input: ToolInputForm, ctx: ToolCallContext): RuleContext {
  return {
    kind: 'tool_call',
    toolName: call.name,
    toolArguments: call.arguments,
    toolInput: input,
    text: null,
    model: ctx.model,
    harness: ctx.harness,
    session: ctx.session,
    workspace: ctx.workspace,
  };
}

function verdictOf(d: RuleDecision): ToolVerdict {
  if (d.action === 'allow') return ALLOW;
  const failed = d.failures.some((f) => f.rule === d.rule);
  return failed ? { action: 'block', reason: d.reason, rule: d.rule!, source: 'wasm', unavailable: true } : { action: d.action, reason: d.reason, rule: d.rule!, source: 'wasm' };
}

/** A module that could not be loaded into a module set, and why. */
export interface UnloadedModule {
  readonly name: string;
  readonly error: string;
}

/**
 * A fixed set of rule modules held in memory (a workspace's stored WASM rules) judging tool calls
 * on a runner the caller owns. Built once per set of modules: each is metered and instantiated to
 * learn the kinds it evaluates; one that does not load is left out and reported in `unloaded`, as
 * a gateway skips a rule file that does not load.
 */
export class WasmModuleJudge implements ToolCallJudge {
  private constructor(
    private readonly runner: WasmRuleRunner,
    private readonly set: RuleSetSnapshot | null,
    private readonly failClosed: boolean,
    readonly unloaded: readonly UnloadedModule[],
  ) {}

  static async build(modules: readonly RuleBytes[], runner: WasmRuleRunner, failClosed: boolean): Promise<WasmModuleJudge> {
    const unloaded: UnloadedModule[] = [];
    const valid = modules.filter((m) => {
      if (WebAssembly.validate(m.bytes as Uint8Array<ArrayBuffer>)) return true;
      unloaded.push({ name: m.name, error: 'not a valid WebAssembly module' });
      return false;
    });
    if (valid.length === 0) return new WasmModuleJudge(runner, null, failClosed, unloaded);
    const whole = buildSnapshot(valid);
    const checks: RuleCheck[] = await runner.check(whole);
    const judging: RuleBytes[] = [];
    whole.rules.forEach((ref, i) => {
      const check = checks[i];
      const module = valid.find((m) => m.sha256 === ref.sha256 && m.name === ref.name)!;
      if (check === undefined || 'error' in check) unloaded.push({ name: ref.name, error: check?.error ?? 'not checked' });
      else if ((check.kinds & KIND_BITS.tool_call) !== 0) judging.push(module);
    });
    const set = judging.length === 0 ? null : buildSnapshot(judging, whole);
    return new WasmModuleJudge(runner, set, failClosed, unloaded);
  }

  get active(): boolean {
    return this.set !== null;
  }

  judge(calls: readonly ToolCall[], ctx: ToolCallContext): MaybePromise<readonly ToolVerdict[]> {
    return judgeWithRuleSet(this.runner, this.set, calls, ctx, this.failClosed);
  }
}
