import type { z } from 'zod';
import { insertWorkspace } from '../auth/accounts.js';
import { recordAudit } from '../audit.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { assignableGateway } from '../gateways/store.js';
import { insertOrg, insertTeam, orgFor, orgView, teamView } from '../orgs/store.js';
import { route, type Route } from '../router.js';
import { assignGatewayBody } from '../contracts/gateways.js';
import { createOrgBody, createTeamBody, createWorkspaceBody } from '../contracts/orgs.js';

export const orgRoutes: Route[] = [
  route.authed<z.infer<typeof createOrgBody>>('A', {
    method: 'POST',
    path: '/orgs',
    statuses: [201, 400, 401],
    summary: "Create an org owned by the caller; the caller's workspace joins it when they own it and it has no org yet",
    body: createOrgBody,
    handler: async ({ services, principal, body }) => {
      const at = new Date(services.clock());
      const org = await services.db.transaction(async (tx) => {
        const created = await insertOrg(tx, { name: body.name, ownerUserId: principal.userId, workspaceId: principal.role === 'OWNER' ? principal.workspaceId : undefined });
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'org.created', detail: { orgId: created.id, name: created.name }, at });
        return created;
      });
      const [workspace] = await services.db.query<{ org_id: string | null }>('SELECT org_id FROM workspaces WHERE id = $1', [principal.workspaceId]);
      return { status: 201, body: { ...orgView(org), workspaceJoined: workspace?.org_id === org.id } };
    },
  }),
  route.authed<z.infer<typeof assignGatewayBody>>('A', {
    method: 'PATCH',
    path: '/orgs/:orgId/gateway',
    summary: "Assign the gateway every workspace of the org uses unless it has its own (org owner; a gateway of one of the org's workspaces), or null",
    body: assignGatewayBody,
    handler: async ({ services, principal, params, body }) => {
      const at = new Date(services.clock());
      const org = await services.db.transaction(async (tx) => {
        const before = await orgFor(tx, principal, params.orgId, 'own');
        if (body.gatewayId !== null) await assignableGateway(tx, body.gatewayId, { orgId: before.id });
        await tx.query('UPDATE orgs SET gateway_id = $2 WHERE id = $1', [before.id, body.gatewayId]);
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'org.gateway_assigned', detail: { orgId: before.id, before: before.gateway_id, after: body.gatewayId }, at });
        return { ...before, gateway_id: body.gatewayId };
      });
      return { body: orgView(org) };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/orgs/:orgId/teams',
    summary: "The org's teams (its owner and members of its workspaces)",
    handler: async ({ services, principal, params }) => {
      const org = await orgFor(services.db, principal, params.orgId, 'read');
      const rows = await services.db.query<{ id: string; org_id: string; name: string; created_at: Date }>('SELECT * FROM teams WHERE org_id = $1 ORDER BY created_at, id', [org.id]);
      return { body: { teams: rows.map(teamView) } };
    },
  }),
  route.authed<z.infer<typeof createTeamBody>>('A', {
    method: 'POST',
    path: '/orgs/:orgId/teams',
    statuses: [201, 400, 401, 403, 404, 409],
    summary: 'Create a team in the org (org owner); a name is unique within its org',
    body: createTeamBody,
    handler: async ({ services, principal, params, body }) => {
      const at = new Date(services.clock());
      const team = await services.db.transaction(async (tx) => {
        const org = await orgFor(tx, principal, params.orgId, 'own');
        const created = await insertTeam(tx, org.id, body.name);
        if (created === undefined) throw new ConflictError('TEAM_EXISTS', `The org already has a team named '${body.name}'.`);
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'team.created', detail: { orgId: org.id, teamId: created.id, name: created.name }, at });
        return created;
      });
      return { status: 201, body: teamView(team) };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/teams/:teamId/workspaces',
    summary: "The team's workspaces (its org's owner and members of its org's workspaces)",
    handler: async ({ services, principal, params }) => {
      const team = await teamFor(services.db, params.teamId);
      await orgFor(services.db, principal, team.org_id, 'read').catch(() => {
        throw new NotFoundError(`Team '${params.teamId}' not found.`);
      });
      const rows = await services.db.query<{ id: string; name: string; plan: string; created_at: Date }>('SELECT id, name, plan, created_at FROM workspaces WHERE team_id = $1 ORDER BY created_at, id', [team.id]);
      return { body: { workspaces: rows.map((w) => ({ id: w.id, name: w.name, plan: w.plan, orgId: team.org_id, teamId: team.id, createdAt: w.created_at.toISOString() })) } };
    },
  }),
  route.authed<z.infer<typeof createWorkspaceBody>>('A', {
    method: 'POST',
    path: '/teams/:teamId/workspaces',
    statuses: [201, 400, 401, 403, 404],
    summary: 'Create a workspace in the team (org owner), with the caller as its OWNER and a first vk_ key for it (shown once)',
    body: createWorkspaceBody,
    handler: async ({ services, principal, params, body }) => {
      const at = new Date(services.clock());
      const created = await services.db.transaction(async (tx) => {
        const team = await teamFor(tx, params.teamId);
        const org = await orgFor(tx, principal, team.org_id, 'own').catch((err: unknown) => {
          throw err instanceof NotFoundError ? new NotFoundError(`Team '${params.teamId}' not found.`) : err;
        });
        const [user] = await tx.query<{ name: string }>('SELECT name FROM users WHERE id = $1', [principal.userId]);
        const made = await insertWorkspace(tx, { name: body.name, ownerUserId: principal.userId, ownerName: user!.name, orgId: org.id, teamId: team.id });
        await recordAudit(tx, { workspaceId: made.workspace.id, memberId: made.member.id, kind: 'workspace.created', detail: { orgId: org.id, teamId: team.id, byMemberId: principal.memberId }, at });
        return made;
      });
      return { status: 201, body: created };
    },
  }),
];

async function teamFor(q: Parameters<typeof orgFor>[0], teamId: string | undefined) {
  const [team] = await q.query<{ id: string; org_id: string }>('SELECT id, org_id FROM teams WHERE id = $1', [teamId]);
  if (team === undefined) throw new NotFoundError(`Team '${teamId}' not found.`);
  return team;
}
