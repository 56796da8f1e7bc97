import type { WorkspaceSettings } from '../../config/settings.js';
import type { PinnedTool } from '../../policy/mcp-tool-changes.js';
import { observeToolSet, type McpServerState, type McpServerView, type RegistryEvent } from '../../policy/mcp-registry.js';
import { recordAudit } from '../audit.js';
import type { Queryable } from '../db/database.js';
import { emitEvent } from '../events/emit.js';

interface ServerRow {
  name: string;
  status: McpServerState['status'];
  disabled_tools: string[];
  pin: PinnedTool[] | null;
  pin_digest: string | null;
  candidate: PinnedTool[] | null;
  candidate_digest: string | null;
  last_change: McpServerState['lastChange'];
  first_seen_at: Date | null;
  last_seen_at: Date | null;
  decided_by: string | null;
  decided_at: Date | null;
  updated_at: Date;
}

export interface StoredServer {
  readonly name: string;
  readonly state: McpServerState;
  readonly firstSeenAt: string | null;
  readonly lastSeenAt: string | null;
  readonly decidedBy: string | null;
  readonly decidedAt: string | null;
}

function fromRow(row: ServerRow): StoredServer {
  return {
    name: row.name,
    state: {
      status: row.status,
      disabledTools: row.disabled_tools,
      pin: row.pin,
      pinDigest: row.pin_digest,
      candidate: row.candidate,
      candidateDigest: row.candidate_digest,
      lastChange: row.last_change,
    },
    firstSeenAt: row.first_seen_at?.toISOString() ?? null,
    lastSeenAt: row.last_seen_at?.toISOString() ?? null,
    decidedBy: row.decided_by,
    decidedAt: row.decided_at?.toISOString() ?? null,
  };
}

/** A registry entry as the API shows it: the pinned tools by name and digest, not their schemas. */
export function serverJson(server: StoredServer) {
  const { state } = server;
  return {
    name: server.name,
    status: state.status,
    disabledTools: state.disabledTools,
    pinDigest: state.pinDigest,
    tools: state.pin?.map((t) => t.name) ?? [],
    candidateDigest: state.candidateDigest,
    candidateTools: state.candidate?.map((t) => t.name) ?? null,
    lastChange: state.lastChange,
    firstSeenAt: server.firstSeenAt,
    lastSeenAt: server.lastSeenAt,
    decidedBy: server.decidedBy,
    decidedAt: server.decidedAt,
  };
}

export function viewOf(state: McpServerState): McpServerView {
  return { status: state.status, disabledTools: state.disabledTools };
}

export async function loadServer(q: Queryable, workspaceId: string, name: string, forUpdate = false): Promise<StoredServer | null> {
  const [row] = await q.query<ServerRow>(`SELECT * FROM mcp_servers WHERE workspace_id = $1 AND name = $2${forUpdate ? ' FOR UPDATE' : ''}`, [workspaceId, name]);
  return row === undefined ? null : fromRow(row);
}

export async function listServers(q: Queryable, workspaceId: string, statuses: readonly string[] | undefined): Promise<StoredServer[]> {
  const rows = await q.query<ServerRow>(
    'SELECT * FROM mcp_servers WHERE workspace_id = $1 AND ($2::jsonb IS NULL OR $2::jsonb ? status) ORDER BY name',
    [workspaceId, statuses === undefined ? null : JSON.stringify(statuses)],
  );
  return rows.map(fromRow);
}

/** Every server the registry knows, as each surface judging a call reads it. */
export async function registryViews(q: Queryable, workspaceId: string): Promise<Record<string, { status: McpServerState['status']; disabledTools: string[] }>> {
  const rows = await q.query<Pick<ServerRow, 'name' | 'status' | 'disabled_tools'>>('SELECT name, status, disabled_tools FROM mcp_servers WHERE workspace_id = $1 ORDER BY name', [workspaceId]);
  return Object.fromEntries(rows.map((r) => [r.name, { status: r.status, disabledTools: r.disabled_tools }]));
}

export async function saveServer(
  q: Queryable,
  workspaceId: string,
  name: string,
  state: McpServerState,
  at: Date,
  how: { seen?: boolean; decidedBy?: string },
): Promise<void> {
  const seen = how.seen === true ? at.toISOString() : null;
  await q.query(
    `INSERT INTO mcp_servers (workspace_id, name, status, disabled_tools, pin, pin_digest, candidate, candidate_digest, last_change, first_seen_at, last_seen_at, decided_by, decided_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13)
     ON CONFLICT (workspace_id, name) DO UPDATE SET status = $3, disabled_tools = $4, pin = $5, pin_digest = $6, candidate = $7, candidate_digest = $8, last_change = $9,
       first_seen_at = COALESCE(mcp_servers.first_seen_at, $10), last_seen_at = COALESCE($10, mcp_servers.last_seen_at),
       decided_by = COALESCE($11, mcp_servers.decided_by), decided_at = COALESCE($12, mcp_servers.decided_at), updated_at = $13`,
    [
      workspaceId,
      name,
      state.status,
      JSON.stringify(state.disabledTools),
      state.pin === null ? null : JSON.stringify(state.pin),
      state.pinDigest,
      state.candidate === null ? null : JSON.stringify(state.candidate),
      state.candidateDigest,
      state.lastChange === null ? null : JSON.stringify(state.lastChange),
      seen,
      how.decidedBy ?? null,
      how.decidedBy === undefined ? null : at.toISOString(),
      at.toISOString(),
    ],
  );
}

export interface Observation {
  readonly server: StoredServer;
  readonly events: readonly RegistryEvent[];
  /** Whether what judges a call (status, switched-off tools) changed: gateways must re-pull. */
  readonly viewChanged: boolean;
}

/**
 * A wrapper reports the tool set its server lists: the server is registered on first sight
 * (pending under mcpDefaultPolicy deny, in the approval queue), its tool set compared with the
 * pin, a high-risk change held or notified as mcpHighRiskToolChange says. Events go to the
 * workspace's notification rules and SIEM destinations; every change is on the audit timeline.
 */
export async function observeServer(
  tx: Queryable,
  at: Date,
  reporter: { workspaceId: string; memberId: string },
  name: string,
  tools: readonly PinnedTool[],
  settings: WorkspaceSettings,
): Promise<Observation> {
  const previous = await loadServer(tx, reporter.workspaceId, name, true);
  const { state, events } = observeToolSet(previous?.state ?? null, tools, {
    defaultPolicy: settings.mcpDefaultPolicy ?? 'allow',
    highRiskReaction: settings.mcpHighRiskToolChange ?? 'notify',
    now: at,
  });
  await saveServer(tx, reporter.workspaceId, name, state, at, { seen: true });
  for (const event of events) {
    if (event.kind === 'mcp.server.pending') {
      await emitEvent(tx, at, { workspaceId: reporter.workspaceId, kind: 'mcp.server.pending', severity: 'MEDIUM', dedupeKey: `mcp.server.pending:${name}:${state.pinDigest}`, data: { server: name, tools: tools.map((t) => t.name) } });
    } else {
      if (event.kind === 'mcp.tool_change.high_risk') {
        await emitEvent(tx, at, {
          workspaceId: reporter.workspaceId,
          kind: 'mcp.tool_change.high_risk',
          severity: 'HIGH',
          dedupeKey: `mcp.tool_change.high_risk:${name}:${state.lastChange?.to}`,
          data: { server: name, held: event.held, findings: event.change.findings.filter((f) => f.highRisk) },
        });
      }
      await recordAudit(tx, { workspaceId: reporter.workspaceId, memberId: reporter.memberId, kind: 'mcp.tool_change', detail: { server: name, ...state.lastChange }, at });
    }
  }
  const stored = (await loadServer(tx, reporter.workspaceId, name))!;
  const viewChanged = previous === null || previous.state.status !== state.status;
  return { server: stored, events, viewChanged };
}
