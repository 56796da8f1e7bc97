import { isoTime } from '../lib/iso-time.js';
import type { Finding } from '../policy/inspect.js';
import type { Enforcement, McpCallTrace, TraceRecord } from '../traces/trace.js';

export interface McpCallRecord {
  readonly id: string;
  /** When the harness asked, ms since the epoch. */
  readonly startedAt: number;
  /** From the harness's request to the answer it got (or the call's end). */
  readonly latencyMs: number;
  readonly workspace: string;
  readonly session: string | null;
  readonly harness: string | null;
  readonly mcp: McpCallTrace;
  readonly findings: readonly Finding[];
  readonly warnings: readonly string[];
}

const ENFORCEMENT: Readonly<Record<McpCallTrace['verdict'], Enforcement>> = {
  allow: 'BYPASS',
  warned: 'BYPASS',
  failed: 'BYPASS',
  redacted: 'ENHANCE',
  block: 'KILL',
  hold: 'KILL',
};

/** The trace record of one MCP tool call, in the shape every trace takes (no model, no tokens, never the arguments). */
export function mcpCallTrace(call: McpCallRecord): TraceRecord {
  const refused = call.mcp.verdict === 'block' || call.mcp.verdict === 'hold';
  return {
    id: call.id,
    time: isoTime(call.startedAt),
    workspace: call.workspace,
    session: call.session,
    harness: call.harness,
    route: 'mcp:tools/call',
    model: null,
    provider: null,
    stream: false,
    status: 200,
    latencyMs: call.latencyMs,
    ttfbMs: null,
    overheadMs: null,
    inputTokens: null,
    outputTokens: null,
    costUsd: null,
    enforcement: ENFORCEMENT[call.mcp.verdict],
    error: refused ? (call.mcp.code ?? call.mcp.rule) : null,
    incidentId: null,
    findings: call.findings,
    shadow: false,
    usageEstimated: false,
    priceEstimated: false,
    warnings: call.warnings,
    attempts: [],
    cache: null,
    anomaly: null,
    toolCalls: [],
    requestRule: null,
    responseRule: null,
    mcp: call.mcp,
  };
}
