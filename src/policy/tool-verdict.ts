import type { PiiDetectorId } from '../config/settings.js';
import { redact, type DlpMatch } from './dlp/index.js';
import { resolveHold, type HoldLedger } from './holds.js';
import { mcpPolicyActive, mcpRefusal, type McpPolicy } from './mcp.js';
import type { ToolCall, ToolCallContext, ToolCallJudge, ToolVerdict } from './tool-judge.js';
import { isPromise, type MaybePromise } from '../lib/maybe-promise.js';

/**
 * The one tool-call verdict. The proxy (a tool call in a model's answer) and the hook gate (a
 * harness asking before it runs a tool) both ask it, with the rules that apply where they stand,
 * and differ only in how they carry the answer back. In order:
 *
 * 1. the workspace's MCP lists, for `mcp__<server>__<tool>` names;
 * 2. DLP patterns over the call's arguments, where the caller asks for them (the hook gate; the
 *    proxy's response DLP already redacts what a model writes);
 * 3. every judge (WASM rules, decide `tool_call` rules): a block from any wins over a hold;
 * 4. holds: each hold rule that stopped the call needs an unexpired approval of the exact call,
 *    else the hold is recorded with the ledger (`resolveHold`).
 *
 * A judge that breaks its contract and rejects refuses the call (a security check fails closed).
 */

/** Tools that only read (seed 002: READ_ONLY_TOOLS); the hook gate lets them through unasked. */
export const READ_ONLY_TOOLS: readonly string[] = ['read_file', 'list_files', 'read', 'cat', 'view'];

export function isReadOnlyTool(name: string): boolean {
  return READ_ONLY_TOOLS.includes(name.toLowerCase());
}

/** DLP over a call's arguments: what to scan with, and each detector's action. */
export interface ArgumentsDlp {
  readonly scan: (text: string) => ReadonlyArray<{ readonly detector: PiiDetectorId }>;
  readonly actions: Readonly<Partial<Record<PiiDetectorId, 'redact' | 'block'>>>;
}

export interface ToolCallPolicy {
  /** Asked in this order; inactive judges are skipped. */
  readonly judges: readonly ToolCallJudge[];
  readonly mcp?: McpPolicy | undefined;
  readonly dlp?: ArgumentsDlp | undefined;
  /**
   * Where holds are recorded and approvals looked up. `null`: there is none, a held call stays
   * held without a hold id. Absent: holds are left unresolved (shadow evaluation records only).
   */
  readonly holds?: HoldLedger | null;
}

/** A call's verdict, with the DLP detectors whose (non-blocking) patterns matched its arguments. */
export type JudgedCall = ToolVerdict & { readonly flagged?: readonly PiiDetectorId[] };

/** Whether any part of `policy` could refuse a call: with none, callers need not hold calls back. */
export function toolPolicyActive(policy: ToolCallPolicy): boolean {
  return policy.judges.some((j) => j.active) || mcpPolicyActive(policy.mcp) || (policy.dlp !== undefined && Object.keys(policy.dlp.actions).length > 0);
}

const ALLOW: ToolVerdict = { action: 'allow' };

/** One verdict per call, in order: at once when every judge answers at once and no hold needs its ledger. Never rejects. */
export function judgeToolCalls(calls: readonly ToolCall[], ctx: ToolCallContext, policy: ToolCallPolicy): MaybePromise<JudgedCall[]> {
  if (calls.length === 0) return [];
  const answers = policy.judges.filter((j) => j.active).map((j) => ask(j, calls, ctx));
  const combine = (byJudge: ReadonlyArray<readonly ToolVerdict[]>) => {
    const judged = calls.map((call, i) => combineVerdicts(call, byJudge.map((v) => v[i] ?? ALLOW), ctx, policy));
    return judged.some(isPromise) ? Promise.all(judged) : (judged as JudgedCall[]);
  };
  return answers.some(isPromise) ? Promise.all(answers).then(combine) : combine(answers as ReadonlyArray<readonly ToolVerdict[]>);
}

/** A judge's verdicts; a judge that breaks its contract (throws or rejects) refuses every call. */
function ask(judge: ToolCallJudge, calls: readonly ToolCall[], ctx: ToolCallContext): MaybePromise<readonly ToolVerdict[]> {
  const failed = (err: unknown): ToolVerdict[] =>
    calls.map(() => ({ action: 'block', reason: `a tool-call judge failed: ${(err as Error).message}`, rule: 'judge_failure', source: 'wasm', unavailable: true }));
  try {
    const answer = judge.judge(calls, ctx);
    return isPromise(answer) ? answer.catch(failed) : answer;
  } catch (err) {
    return failed(err);
  }
}

/** One call's verdict from the MCP lists, its arguments' DLP and the judges' verdicts on it. */
function combineVerdicts(call: ToolCall, verdicts: readonly ToolVerdict[], ctx: ToolCallContext, policy: ToolCallPolicy): MaybePromise<JudgedCall> {
  const mcp = mcpRefusal(call.name, policy.mcp);
  if (mcp !== null) return { action: 'block', source: 'mcp', rule: mcp.rule, code: mcp.code, reason: mcp.reason };
  const dlp = policy.dlp === undefined ? null : scanArguments(call, policy.dlp);
  if (dlp?.blockedBy !== undefined) {
    return { action: 'block', source: 'dlp', rule: dlp.blockedBy, reason: `${dlp.blockedBy} found in the ${call.name} tool call's arguments` };
  }
  const flagged = dlp !== null && dlp.flagged.length > 0 ? { flagged: dlp.flagged } : {};
  const block = verdicts.find((v) => v.action === 'block');
  if (block !== undefined) return { ...block, ...flagged };
  const holds = verdicts.filter((v) => v.action === 'hold');
  const unjudged = verdicts.find((v) => v.action === 'allow' && v.unjudged !== undefined);
  if (holds.length === 0) return { ...(unjudged ?? ALLOW), ...flagged };
  const ledger = policy.holds;
  if (ledger === undefined) return { ...holds[0]!, ...flagged };
  return (async (): Promise<JudgedCall> => {
    let bypassed: ToolVerdict | undefined;
    for (const v of holds) {
      const resolved = await resolveHold(v, call, ctx, ledger);
      if (resolved.action !== 'allow') return { ...resolved, ...flagged };
      bypassed ??= resolved;
    }
    return { ...(bypassed ?? unjudged ?? ALLOW), ...flagged };
  })();
}

/** Every string a call's arguments hold (the raw text of a call whose input is not JSON). */
function argumentStrings(call: ToolCall): string[] {
  if (call.input !== 'json') return [call.arguments];
  let value: unknown;
  try {
    value = JSON.parse(call.arguments);
  } catch {
    return [call.arguments];
  }
  const out: string[] = [];
  mapStrings(value, (text) => {
    out.push(text);
    return text;
  });
  return out;
}

/** `value` with every string leaf (never a key) replaced by `map` of it, to a depth of 64. */
function mapStrings(value: unknown, map: (text: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return map(value);
  if (depth >= 64 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = mapStrings(item, map, depth + 1);
  return out;
}

/**
 * A call's parsed arguments with what the DLP detectors whose action is `redact` found replaced
 * by `[REDACTED:<detector>]`: every string the verdict scanned, so a call `judgeToolCalls` flagged
 * leaves with nothing flagged in it.
 */
export function redactCallArguments(value: unknown, scanner: { scan(text: string): readonly DlpMatch[] }, actions: ArgumentsDlp['actions']): unknown {
  return mapStrings(value, (text) => {
    const matches = scanner.scan(text).filter((m) => actions[m.detector] === 'redact');
    return matches.length === 0 ? text : redact(text, matches);
  });
}

function scanArguments(call: ToolCall, dlp: ArgumentsDlp): { blockedBy?: PiiDetectorId; flagged: PiiDetectorId[] } {
  const flagged = new Set<PiiDetectorId>();
  for (const text of argumentStrings(call)) {
    for (const match of dlp.scan(text)) {
      const action = dlp.actions[match.detector];
      if (action === 'block') return { blockedBy: match.detector, flagged: [...flagged] };
      if (action === 'redact') flagged.add(match.detector);
    }
  }
  return { flagged: [...flagged] };
}
