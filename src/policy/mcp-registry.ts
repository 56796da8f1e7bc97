import { scoreToolSetChange, toolSetDigest, type PinnedTool, type ToolSetChange } from './mcp-tool-changes.js';

/**
 * The MCP server registry's state machine (seed 001: mcpDefaultPolicy, mcpHighRiskToolChange;
 * seed 002: SERVER_BLOCKED, SERVER_HELD, SERVER_NOT_APPROVED, TOOL_DISABLED). Pure: the control
 * plane keeps the state in its database, and every surface that judges a call reads the
 * resulting status.
 *
 * - approved: an owner or admin approved the server and its pinned tool set.
 * - unreviewed: seen under mcpDefaultPolicy allow and never reviewed; its first tool set is
 *   pinned on first use, so a later rug pull is still caught.
 * - pending: seen under deny and waiting in the approval queue; its calls are refused.
 * - held: its tool set changed in a way scored high risk under mcpHighRiskToolChange hold; back in
 *   the approval queue, its calls refused, until re-approved (approval pins the new set).
 * - blocked: refused whatever the lists say.
 */
export const MCP_SERVER_STATUSES = ['approved', 'unreviewed', 'pending', 'held', 'blocked'] as const;
export type McpServerStatus = (typeof MCP_SERVER_STATUSES)[number];

export interface McpServerState {
  readonly status: McpServerStatus;
  readonly disabledTools: readonly string[];
  /** The tool set the server is trusted with; null until one is seen. */
  readonly pin: readonly PinnedTool[] | null;
  readonly pinDigest: string | null;
  /** A changed tool set waiting for approval (held servers). */
  readonly candidate: readonly PinnedTool[] | null;
  readonly candidateDigest: string | null;
  /** The latest scored change, and when it was seen. */
  readonly lastChange: (ToolSetChange & { readonly at: string; readonly from: string | null; readonly to: string }) | null;
}

/** What the registry says of a server to whoever judges its calls. */
export interface McpServerView {
  readonly status: McpServerStatus;
  readonly disabledTools: readonly string[];
}

export type RegistryEvent =
  | { readonly kind: 'mcp.server.pending' }
  | { readonly kind: 'mcp.tool_change.high_risk'; readonly held: boolean; readonly change: ToolSetChange }
  | { readonly kind: 'mcp.tool_change.accepted'; readonly change: ToolSetChange };

export interface ObserveOptions {
  readonly defaultPolicy: 'allow' | 'deny';
  readonly highRiskReaction: 'notify' | 'hold';
  readonly now: Date;
}

/** A server seen for the first time, or seen again, with the tool set it lists now. */
export function observeToolSet(previous: McpServerState | null, tools: readonly PinnedTool[], opts: ObserveOptions): { state: McpServerState; events: RegistryEvent[] } {
  const digest = toolSetDigest(tools);
  if (previous === null) {
    const status = opts.defaultPolicy === 'deny' ? 'pending' : 'unreviewed';
    const state: McpServerState = { status, disabledTools: [], pin: tools, pinDigest: digest, candidate: null, candidateDigest: null, lastChange: null };
    return { state, events: status === 'pending' ? [{ kind: 'mcp.server.pending' }] : [] };
  }
  if (previous.pin === null || previous.status === 'pending') {
    // Nothing is trusted yet: what an approver will see is what the server lists now.
    return { state: { ...previous, pin: tools, pinDigest: digest }, events: [] };
  }
  if (digest === previous.pinDigest && previous.status !== 'held') return { state: previous, events: [] };
  if (previous.status === 'held' && (digest === previous.candidateDigest || digest === previous.pinDigest)) return { state: previous, events: [] };
  if (previous.status === 'blocked') return { state: previous, events: [] };

  const change = scoreToolSetChange(previous.pin, tools);
  const lastChange = { ...change, at: opts.now.toISOString(), from: previous.pinDigest, to: digest };
  if (change.risk === 'high' && opts.highRiskReaction === 'hold') {
    return {
      state: { ...previous, status: 'held', candidate: tools, candidateDigest: digest, lastChange },
      events: previous.status === 'held' ? [] : [{ kind: 'mcp.tool_change.high_risk', held: true, change }],
    };
  }
  const state: McpServerState = { ...previous, pin: tools, pinDigest: digest, candidate: null, candidateDigest: null, lastChange };
  return { state, events: [change.risk === 'high' ? { kind: 'mcp.tool_change.high_risk', held: false, change } : { kind: 'mcp.tool_change.accepted', change }] };
}

/**
 * Approval by an owner or admin: the server runs, and a held server's changed tool set becomes
 * its pin. `digest`, when given, must be the tool set the approver saw (else null: it changed
 * again since, and must be looked at again).
 */
export function approveServer(state: McpServerState, digest?: string): McpServerState | null {
  const awaiting = state.candidateDigest ?? state.pinDigest;
  if (digest !== undefined && digest !== awaiting) return null;
  if (state.candidate !== null) return { ...state, status: 'approved', pin: state.candidate, pinDigest: state.candidateDigest, candidate: null, candidateDigest: null };
  return { ...state, status: 'approved' };
}

export function blockServer(state: McpServerState): McpServerState {
  return { ...state, status: 'blocked' };
}

/** A server an admin names before it is ever seen (approving or blocking it ahead of use). */
export function emptyServerState(status: McpServerStatus): McpServerState {
  return { status, disabledTools: [], pin: null, pinDigest: null, candidate: null, candidateDigest: null, lastChange: null };
}
