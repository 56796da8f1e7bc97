import type { Logger } from '../../lib/logger.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';
import type { WasmRulesConfig } from '../../config/proxy-config.js';
import type { ToolCall, ToolCallContext, ToolCallJudge, ToolVerdict } from '../tool-judge.js';
import { judgeWithRuleSet } from './tool-calls.js';
import type { RuleContext } from './abi.js';
import { responseText } from './call-text.js';
import { RuleDirectory, type FailedRule, type LoadedRule } from './rule-directory.js';
import { WasmRuleRunner, type RuleDecision, type RuleRunnerState } from './runner.js';

export interface WasmRulesOptions extends Omit<WasmRulesConfig, 'dir' | 'deadlineMs'> {
  /** The folder, resolved (see `wasmDir`). */
  readonly dir: string;
  readonly logger: Logger;
}

export interface WasmRulesHealth {
  readonly dir: string;
  readonly rules: ReadonlyArray<LoadedRule>;
  /** Files in the folder that did not load, and why. */
  readonly failed: readonly FailedRule[];
  readonly failurePolicy: 'closed' | 'open';
  /** Fuel per rule per call. */
  readonly fuel: number;
  readonly runner: RuleRunnerState | null;
}

/** Who is asking, besides the call itself. */
export type CallerContext = Omit<ToolCallContext, 'traceId'>;

const PAGE_BYTES = 65536;

/**
 * The installed WASM rules of this proxy: the watched folder, and the runner that evaluates them
 * metered on this thread (made only once a rule is installed, so a proxy without rules pays
 * nothing; modules are metered in a child process that exists only while loading).
 */
export class WasmRules implements ToolCallJudge {
  private readonly directory: RuleDirectory;
  private runnerInstance: WasmRuleRunner | null = null;

  constructor(private readonly options: WasmRulesOptions) {
    this.directory = new RuleDirectory({
      dir: options.dir,
      rescanMs: options.rescanMs,
      logger: options.logger,
      check: (set) => this.runner().check(set),
    });
  }

  start(): Promise<void> {
    return this.directory.start();
  }

  /** Whether any loaded rule evaluates tool calls (the relay holds none otherwise). */
  get active(): boolean {
    return this.directory.forKind('tool_call') !== null;
  }

  /** Rescans the folder now (the watcher and the periodic rescan do this on their own). */
  rescan(): Promise<void> {
    return this.directory.rescan();
  }

  /** The rules' verdict on a request, given its text (requestText of its body), or null when no rule is installed. */
  async judgeRequestText(text: string | null, caller: CallerContext): Promise<RuleDecision | null> {
    const set = this.directory.forKind('request');
    if (set === null) return null;
    return this.runner().evaluate(set, { kind: 'request', toolName: null, toolArguments: null, toolInput: null, text, ...fields(caller) });
  }

  /** Whether any loaded rule evaluates requests. */
  get judgesRequests(): boolean {
    return this.directory.forKind('request') !== null;
  }

  /** The rules' verdict on a complete response's text, or null when no rule evaluates responses (or it has no text). */
  async judgeResponse(body: unknown, caller: CallerContext): Promise<RuleDecision | null> {
    const set = this.directory.forKind('response');
    if (set === null) return null;
    const text = responseText(body);
    if (text === null) return null;
    return this.runner().evaluate(set, { kind: 'response', toolName: null, toolArguments: null, toolInput: null, text, ...fields(caller) });
  }

  /** Identifies the loaded rules ('' when none): an answer judged under other rules must not be replayed. */
  get generation(): string {
    return this.directory.generation;
  }

  /** Whether any loaded rule evaluates responses. */
  get judgesResponses(): boolean {
    return this.directory.forKind('response') !== null;
  }

  judge(calls: readonly ToolCall[], ctx: ToolCallContext): MaybePromise<readonly ToolVerdict[]> {
    const set = this.directory.forKind('tool_call');
    return set === null ? calls.map(() => ({ action: 'allow' })) : judgeWithRuleSet(this.runner(), set, calls, ctx, this.options.failurePolicy === 'closed');
  }

  health(): WasmRulesHealth {
    return {
      dir: this.options.dir,
      rules: this.directory.loaded,
      failed: this.directory.failed,
      failurePolicy: this.options.failurePolicy,
      fuel: this.options.fuel,
      runner: this.runnerInstance?.state() ?? null,
    };
  }

  async close(): Promise<void> {
    this.directory.close();
    await this.runnerInstance?.close();
  }

  private runner(): WasmRuleRunner {
    this.runnerInstance ??= new WasmRuleRunner({
      fuel: this.options.fuel,
      memoryCapPages: Math.floor((this.options.memoryMaxMb * 1024 * 1024) / PAGE_BYTES),
      failurePolicy: this.options.failurePolicy,
      logger: this.options.logger,
    });
    return this.runnerInstance;
  }
}

function fields(c: CallerContext): Pick<RuleContext, 'model' | 'harness' | 'session' | 'workspace'> {
  return { model: c.model, harness: c.harness, session: c.session, workspace: c.workspace };
}
