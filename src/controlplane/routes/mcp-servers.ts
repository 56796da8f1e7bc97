import { z } from 'zod';
import type { WorkspaceSettings } from '../../config/settings.js';
import { MAX_PINNED_TOOLS, pinnedToolSet } from '../../policy/mcp-tool-changes.js';
import { approveServer, blockServer, emptyServerState, MCP_SERVER_STATUSES, type McpServerState } from '../../policy/mcp-registry.js';
import { recordConfigChange } from '../audit.js';
import type { Queryable } from '../db/database.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { loadServer, listServers, observeServer, saveServer, serverJson, viewOf } from '../mcp-registry/store.js';
import { route, type Route } from '../router.js';

/** A server's name as mcpAllowedServers holds it. */
const serverName = z.string().min(1).max(256);

const listQuery = z.strictObject({
  /** Comma-separated statuses; `pending,held` is the approval queue. */
  status: z
    .string()
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(z.enum(MCP_SERVER_STATUSES)).min(1))
    .optional(),
});

const listedTool = z.looseObject({
  name: z.string().min(1).max(256),
  description: z.string().max(64 * 1024).optional(),
  inputSchema: z.unknown().optional(),
  annotations: z.record(z.string(), z.unknown()).optional(),
});

const observeBody = z.strictObject({ tools: z.array(listedTool).max(MAX_PINNED_TOOLS) });
const approveBody = z.strictObject({
  /** The tool set the approver reviewed (its digest); approval fails with 409 if the server listed another since. */
  digest: z.string().regex(/^[0-9a-f]{64}$/).optional(),
}).default({});
const disabledToolsBody = z.strictObject({ tools: z.array(z.string().min(1).max(256)).max(500) });

async function workspaceSettings(q: Queryable, workspaceId: string): Promise<WorkspaceSettings> {
  const [row] = await q.query<{ settings: WorkspaceSettings }>('SELECT settings FROM workspaces WHERE id = $1', [workspaceId]);
  return row?.settings ?? {};
}

function checkedName(params: Readonly<Record<string, string>>): string {
  const parsed = serverName.safeParse(params.name);
  if (!parsed.success) throw new NotFoundError(`MCP server name must be 1–256 characters.`);
  return parsed.data;
}

/** An owner's or admin's decision on one server: saved, audited, and pushed to every gateway. */
function decision<B = undefined>(d: {
  method: 'POST' | 'PUT';
  action: string;
  summary: string;
  body?: z.ZodType<B>;
  decide: (state: McpServerState | null, body: B) => McpServerState;
}): Route {
  const { action, decide } = d;
  return route.authed<B>('OA', {
    method: d.method,
    path: `/mcp/servers/:name/${action}`,
    summary: d.summary,
    ...(d.body === undefined ? {} : { body: d.body }),
    statuses: [200, 400, 401, 403, 409],
    handler: async ({ services, principal, params, body }) => {
      const name = checkedName(params);
      const now = new Date(services.clock());
      const { result } = await services.changeConfig(principal.workspaceId, async (tx) => {
        const previous = await loadServer(tx, principal.workspaceId, name, true);
        const next = decide(previous?.state ?? null, body);
        await saveServer(tx, principal.workspaceId, name, next, now, { decidedBy: principal.memberId });
        await recordConfigChange(tx, {
          workspaceId: principal.workspaceId,
          memberId: principal.memberId,
          key: `mcp.server:${name}`,
          action,
          before: previous === null ? null : viewOf(previous.state),
          after: viewOf(next),
        });
        return (await loadServer(tx, principal.workspaceId, name))!;
      });
      return { body: serverJson(result) };
    },
  });
}

export const mcpServerRoutes: Route[] = [
  route.authed<undefined, z.infer<typeof listQuery>>('A', {
    method: 'GET',
    path: '/mcp/servers',
    summary: "The workspace's MCP server registry; `status=pending,held` is the approval queue",
    query: listQuery,
    handler: async ({ services, principal, query }) => ({ body: { servers: (await listServers(services.db, principal.workspaceId, query.status)).map(serverJson) } }),
  }),
  route.authed('A', {
    method: 'GET',
    path: '/mcp/servers/:name',
    summary: 'One registry entry with its pinned tool set and, for a held server, the changed set waiting for approval',
    handler: async ({ services, principal, params }) => {
      const server = await loadServer(services.db, principal.workspaceId, checkedName(params));
      if (server === null) throw new NotFoundError(`MCP server '${params.name}' is not in the registry.`);
      return { body: { ...serverJson(server), pin: server.state.pin, candidate: server.state.candidate } };
    },
  }),
  route.authed<z.infer<typeof observeBody>>('A', {
    method: 'POST',
    path: '/mcp/servers/:name/observe',
    summary: 'An MCP proxy reports the tool set its server lists: registered on first sight, compared with the pin, held or notified on a high-risk change',
    body: observeBody,
    handler: async ({ services, principal, params, body }) => {
      const name = checkedName(params);
      const now = new Date(services.clock());
      const observed = await services.db.transaction(async (tx) =>
        observeServer(tx, now, principal, name, pinnedToolSet(body.tools), await workspaceSettings(tx, principal.workspaceId)),
      );
      if (observed.viewChanged) await services.changeConfig(principal.workspaceId, async () => undefined);
      if (observed.events.length > 0) services.deliveries.wake();
      return { body: serverJson(observed.server) };
    },
  }),
  decision({
    method: 'POST',
    action: 'approve',
    summary: 'Approve a server (a held one with the changed tool set it waits with); a server not seen yet is approved ahead of use',
    body: approveBody,
    decide: (state, body) => {
      const approved = approveServer(state ?? emptyServerState('pending'), body.digest);
      if (approved === null) throw new ConflictError('DIGEST_MISMATCH', 'The server has listed another tool set since the one approved: review it again.');
      return approved;
    },
  }),
  decision({ method: 'POST', action: 'block', summary: 'Block a server: every call to it is refused SERVER_BLOCKED', decide: (state) => blockServer(state ?? emptyServerState('blocked')) }),
  decision({
    method: 'PUT',
    action: 'disabled-tools',
    summary: 'Switch single tools off on a server (the whole list): their calls are refused TOOL_DISABLED',
    body: disabledToolsBody,
    decide: (state, body) => ({ ...(state ?? emptyServerState('unreviewed')), disabledTools: [...new Set(body.tools)] }),
  }),
  route.authed('OA', {
    method: 'DELETE',
    path: '/mcp/servers/:name',
    summary: 'Forget a server: its pin and decisions are dropped, and it is registered anew when next seen',
    handler: async ({ services, principal, params }) => {
      const name = checkedName(params);
      await services.changeConfig(principal.workspaceId, async (tx) => {
        const previous = await loadServer(tx, principal.workspaceId, name, true);
        if (previous === null) throw new NotFoundError(`MCP server '${name}' is not in the registry.`);
        await tx.query('DELETE FROM mcp_servers WHERE workspace_id = $1 AND name = $2', [principal.workspaceId, name]);
        await recordConfigChange(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, key: `mcp.server:${name}`, action: 'delete', before: viewOf(previous.state), after: null });
      });
      return { body: { deleted: true, name } };
    },
  }),
];
