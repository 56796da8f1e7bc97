import type { MaybePromise } from '../lib/maybe-promise.js';

/**
 * The contract between the response path and everything that judges the tool calls a model emits
 * (WASM rules, decide `tool_call` rules). The relay extracts complete tool calls (holding streamed
 * deltas until a call's arguments are complete), asks every judge, and substitutes refused calls.
 */

/**
 * How a call's `arguments` are written. `json`: the JSON text the model emitted (possibly
 * malformed). `text`: raw text that is not meant as JSON (a freeform custom tool's input, code).
 * `unknown`: the call is an item the proxy does not know how to read; `arguments` holds the item
 * as JSON, and no rule can judge it, so each judge answers its failure policy.
 */
export type ToolInput = 'json' | 'text' | 'unknown';

/** One complete tool call as the model emitted it. */
export interface ToolCall {
  /** The provider's call id (`call_…`, `toolu_…`, an item id). */
  readonly id: string;
  /** The tool's name; for an `unknown` call, the item's type. */
  readonly name: string;
  /** The input exactly as emitted, written as `input` says. */
  readonly arguments: string;
  readonly input: ToolInput;
}

/** What a judge may know about the call besides the call itself. */
export interface ToolCallContext {
  readonly workspace: string;
  readonly model: string;
  readonly harness: string | null;
  readonly session: string | null;
  readonly traceId: string;
}

/** What found a call wanting: a WASM rule, a decide rule, the MCP server lists, or a DLP pattern in its arguments. */
export type VerdictSource = 'wasm' | 'decide' | 'mcp' | 'dlp';

/** An approval of this exact call that let it through instead of holding it (seed 002: `hold_approved_bypass_used`). */
export interface ApprovedBypass {
  readonly holdId: string;
  readonly rule: string;
  /** When the approval stops letting the call through, RFC 3339. */
  readonly expiresAt: string;
  /** What held the call (the hold rule's kind). */
  readonly source?: VerdictSource;
}

/**
 * What became of a hold once the control plane was asked: recorded (its id, and the incident it
 * opened or joined), or not recorded and why (no control plane, or one that could not be reached).
 */
export type HoldRecord = { readonly holdId: string; readonly incidentId: string | null } | { readonly holdId: null; readonly unrecorded: string };

export type ToolVerdict =
  /** `unjudged`: the judge could not read the call and its failure policy let it through; why. `bypass`: an approved hold let it through. */
  | { readonly action: 'allow'; readonly unjudged?: string; readonly bypass?: ApprovedBypass }
  /**
   * The call is removed and the agent told why. `code`: the seed's refusal code when one applies
   * (SERVER_NOT_ALLOWED, …); `unavailable`: a check could not complete (GOVERNANCE_UNAVAILABLE)
   * and this is its failure policy refusing.
   */
  | {
      readonly action: 'block';
      readonly reason: string;
      readonly rule: string;
      readonly source: VerdictSource;
      readonly code?: string;
      readonly unavailable?: boolean;
      /** The incident the refusal opened or joined, once the control plane has said. */
      readonly incidentId?: string | null;
    }
  /** The call awaits a person's approval; `hold` says whether the hold was recorded (absent until it was put to a ledger). */
  | { readonly action: 'hold'; readonly reason: string; readonly rule: string; readonly source: VerdictSource; readonly hold?: HoldRecord };

export interface ToolCallJudge {
  /** Whether any rule could apply; the relay skips holding tool calls when no judge is active. */
  readonly active: boolean;
  /**
   * One verdict per call, in order: at once when the judge needs nothing outside this thread.
   * Never throws or rejects: a judge that fails answers per its failure policy.
   */
  judge(calls: readonly ToolCall[], ctx: ToolCallContext): MaybePromise<readonly ToolVerdict[]>;
}

/**
 * The verdict of a judge whose rules cannot read `call` (an `unknown` item): its failure policy.
 * Closed refuses the call; open lets it through, marked unjudged so it is recorded.
 */
export function unjudgeableVerdict(call: ToolCall, failClosed: boolean, source: 'wasm' | 'decide'): ToolVerdict {
  const reason = `svc cannot read a ${call.name} item, so no ${source === 'wasm' ? 'WASM' : 'decide'} rule could judge it`;
  return failClosed ? { action: 'block', reason, rule: 'unjudgeable_call', source } : { action: 'allow', unjudged: reason };
}
