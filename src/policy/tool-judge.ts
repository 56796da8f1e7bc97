/**
 * The contract between the response path and everything that judges the tool calls a model emits
 * (WASM rules, decide `tool_call` rules). The relay extracts complete tool calls (holding streamed
 * deltas until a call's arguments are complete), asks every judge, and substitutes refused calls.
 */

/** One complete tool call as the model emitted it. */
export interface ToolCall {
  /** The provider's call id (`call_…`, `toolu_…`). */
  readonly id: string;
  readonly name: string;
  /** The arguments exactly as emitted: JSON text, possibly malformed. */
  readonly arguments: string;
}

/** What a judge may know about the call besides the call itself. */
export interface ToolCallContext {
  readonly workspace: string;
  readonly model: string;
  readonly harness: string | null;
  readonly session: string | null;
  readonly traceId: string;
}

export type ToolVerdict =
  | { readonly action: 'allow' }
  /** block: the call is removed and the agent told why; hold: the call awaits a person's approval. */
  | { readonly action: 'block' | 'hold'; readonly reason: string; readonly rule: string; readonly source: 'wasm' | 'decide' };

export interface ToolCallJudge {
  /** Whether any rule could apply; the relay skips holding tool calls when no judge is active. */
  readonly active: boolean;
  /** One verdict per call, in order. Never rejects: a judge that fails answers per its failure policy. */
  judge(calls: readonly ToolCall[], ctx: ToolCallContext): Promise<readonly ToolVerdict[]>;
}
