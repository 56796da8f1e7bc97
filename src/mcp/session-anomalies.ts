import type { AnomalyPolicy } from '../policy/anomaly/anomaly-policy.js';
import { detectAnomalies } from '../policy/anomaly/detect.js';
import { decideAnomaly, type AnomalyDecision } from '../policy/anomaly/guard.js';
import type { SessionMemory } from '../policy/anomaly/sessions.js';

/** The calls of a session the detectors read: as many as the proxy's detectors see in a long conversation. */
const MAX_CALLS = 60;

interface McpCall {
  readonly id: string;
  readonly tool: string;
  readonly input: Record<string, unknown>;
  result: { readonly text: string; readonly isError: boolean } | null;
}

/**
 * One MCP session's tool calls as the anomaly detectors read them (seed 001: mcpAnomalyMode,
 * mcpAnomalyOverrides): the same detectors the proxy runs over a conversation, fed the session's
 * `tools/call` stream as if it were one — each call a tool use, each result its tool result.
 */
export class McpSessionAnomalies {
  private readonly calls: McpCall[] = [];
  private readonly memory: SessionMemory = { toolPins: new Map(), counts: new Map() };

  /**
   * The detectors' decision on the session with the call about to be made added, or null when
   * the mode is off or nothing was found. The call stays in the session unless `forget` takes it out.
   */
  judge(policy: AnomalyPolicy, shadow: boolean, call: { id: string; tool: string; input: Record<string, unknown> | undefined }): AnomalyDecision | null {
    if (policy.mode === 'off') return null;
    this.calls.push({ id: call.id, tool: call.tool, input: call.input ?? {}, result: null });
    if (this.calls.length > MAX_CALLS) this.calls.shift();
    const report = detectAnomalies({ messages: this.conversation() }, []);
    if (report === null || report.findings.length === 0) return null;
    return decideAnomaly(policy, { findings: report.findings, toolPins: {} }, this.memory, shadow);
  }

  /** The server's answer to a call. */
  answered(id: string, result: Record<string, unknown>): void {
    const call = this.calls.find((c) => c.id === id);
    if (call === undefined) return;
    const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
    const text = content.map((part) => (part !== null && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('\n');
    call.result = { text, isError: result.isError === true };
  }

  /** A call that was not made (refused): not part of what the agent did. */
  forget(id: string): void {
    const at = this.calls.findIndex((c) => c.id === id);
    if (at !== -1) this.calls.splice(at, 1);
  }

  /** The calls as an Anthropic-style conversation: a tool use per call, its result after it. */
  private conversation(): unknown[] {
    const messages: unknown[] = [{ role: 'user', content: 'MCP session' }];
    for (const c of this.calls) {
      messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: c.id, name: c.tool, input: c.input }] });
      if (c.result !== null) messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: c.id, content: c.result.text, is_error: c.result.isError }] });
    }
    return messages;
  }
}
