import { z } from 'zod';
import { emailHolders, lockEmail, normalizeEmail } from '../auth/accounts.js';
import { recordAudit } from '../audit.js';
import type { Queryable } from '../db/database.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../errors.js';
import { newId } from '../ids.js';
import { planOf } from '../plans.js';
import { route, type Route } from '../router.js';

const inviteBody = z.strictObject({
  email: z.email().max(256),
  displayName: z.string().min(1).max(128),
  role: z.enum(['ADMIN', 'EM', 'DEVELOPER', 'VIEWER'], { message: 'role must be ADMIN, EM, DEVELOPER or VIEWER (OWNER cannot be assigned by invitation)' }),
  tempPassword: z.string().min(8).max(128),
});

const roleBody = z.strictObject({
  role: z.enum(['ADMIN', 'EM', 'DEVELOPER', 'VIEWER'], { message: 'role must be ADMIN, EM, DEVELOPER or VIEWER (a member is never made OWNER)' }),
});

interface MemberRow {
  id: string;
  role: string;
  deactivated_at: Date | null;
}

async function loadMember(q: Queryable, workspaceId: string, id: string | undefined): Promise<MemberRow> {
  const [row] = await q.query<MemberRow>('SELECT id, role, deactivated_at FROM members WHERE workspace_id = $1 AND id = $2 FOR UPDATE', [workspaceId, id]);
  if (row === undefined) throw new NotFoundError(`Member '${id}' not found in this workspace.`);
  return row;
}

export const memberRoutes: Route[] = [
  route.authed('A', {
    method: 'GET',
    path: '/members',
    summary: "List the workspace's members",
    handler: async ({ services, principal }) => {
      const rows = await services.db.query<{ id: string; user_id: string; email: string; display_name: string; role: string; created_at: Date; deactivated_at: Date | null }>(
        `SELECT m.id, m.user_id, u.email, m.display_name, m.role, m.created_at, m.deactivated_at FROM members m JOIN users u ON u.id = m.user_id
         WHERE m.workspace_id = $1 ORDER BY m.created_at`,
        [principal.workspaceId],
      );
      return {
        body: {
          members: rows.map((r) => ({
            memberId: r.id,
            userId: r.user_id,
            email: r.email,
            displayName: r.display_name,
            role: r.role,
            createdAt: r.created_at.toISOString(),
            active: r.deactivated_at === null,
            deactivatedAt: r.deactivated_at?.toISOString() ?? null,
          })),
        },
      };
    },
  }),
  route.authed<z.infer<typeof inviteBody>>('OA', {
    method: 'POST',
    path: '/members/invite',
    summary: 'Create a workspace member with a temporary password (no message is sent)',
    body: inviteBody,
    statuses: [201, 400, 401, 403, 409],
    handler: async ({ services, principal, body }) => {
      const email = normalizeEmail(body.email);
      const passwordHash = await services.passwords.hash(body.tempPassword);
      const result = await services.db.transaction(async (tx) => {
        const [workspace] = await tx.query<{ plan: string }>('SELECT plan FROM workspaces WHERE id = $1 FOR UPDATE', [principal.workspaceId]);
        await lockEmail(tx, email);
        const [member] = await tx.query(
          'SELECT 1 FROM users u JOIN members m ON m.user_id = u.id AND m.workspace_id = $2 WHERE u.email = $1 AND u.superseded_at IS NULL',
          [email, principal.workspaceId],
        );
        if (member !== undefined) throw new ConflictError('DUPLICATE_MEMBER', `${email} is already a member of this workspace.`);
        const seats = planOf(workspace!.plan).seats;
        const [count] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM members WHERE workspace_id = $1', [principal.workspaceId]);
        if (seats !== null && count!.n >= seats) throw new ForbiddenError(`The workspace's ${workspace!.plan} plan allows ${seats} seats, all taken.`);
        // Only a verified address is joined with its own account (and password). An unverified one
        // may be someone else's sign-up with that address: the invite gets a user of its own.
        const { verified } = await emailHolders(tx, email);
        const userId = verified?.id ?? newId.user();
        if (verified === undefined) {
          await tx.query('INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)', [userId, email, body.displayName, passwordHash]);
        }
        const memberId = newId.member();
        await tx.query('INSERT INTO members (id, workspace_id, user_id, role, display_name) VALUES ($1, $2, $3, $4, $5)', [
          memberId,
          principal.workspaceId,
          userId,
          body.role,
          body.displayName,
        ]);
        return { memberId, userId, email, displayName: body.displayName, role: body.role, workspaceId: principal.workspaceId };
      });
      return { status: 201, body: result };
    },
  }),
  route.authed('OA', {
    method: 'DELETE',
    path: '/members/:id',
    statuses: [200, 401, 403, 404, 409],
    summary: "Deactivate a member: their keys and sessions stop working at once, and gateways drop the keys with the next config push",
    handler: async ({ services, principal, params }) => {
      const at = new Date(services.clock()).toISOString();
      const { result } = await services.changeConfig(principal.workspaceId, async (tx) => {
        const member = await loadMember(tx, principal.workspaceId, params.id);
        if (member.role === 'OWNER') throw new ForbiddenError('The OWNER cannot be deactivated.');
        if (member.id === principal.memberId) throw new ConflictError('SELF', 'A member cannot deactivate themselves.');
        if (member.deactivated_at !== null) throw new ConflictError('ALREADY_DEACTIVATED', `Member '${member.id}' is already deactivated.`);
        await tx.query('UPDATE members SET deactivated_at = $2 WHERE id = $1', [member.id, at]);
        const keys = await tx.query<{ id: string }>('UPDATE api_keys SET revoked_at = $2 WHERE member_id = $1 AND revoked_at IS NULL RETURNING id', [member.id, at]);
        const sessions = await tx.query<{ id: string }>('UPDATE sessions SET revoked_at = $2 WHERE member_id = $1 AND revoked_at IS NULL RETURNING id', [member.id, at]);
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'member.deactivated', detail: { targetMemberId: member.id, keysRevoked: keys.length, sessionsEnded: sessions.length }, at: new Date(at) });
        return { keyIds: keys.map((k) => k.id), sessionIds: sessions.map((s) => s.id) };
      });
      services.sockets.keysRevoked(result.keyIds);
      services.sockets.sessionsEnded(result.sessionIds);
      return { body: { deactivated: true, memberId: params.id, keysRevoked: result.keyIds.length, sessionsEnded: result.sessionIds.length } };
    },
  }),
  route.authed('OA', {
    method: 'POST',
    path: '/members/:id/reactivate',
    statuses: [200, 401, 403, 404, 409],
    summary: 'Reactivate a member; their old keys stay revoked (they log in again and make new ones)',
    handler: async ({ services, principal, params }) => {
      const at = new Date(services.clock());
      await services.db.transaction(async (tx) => {
        const member = await loadMember(tx, principal.workspaceId, params.id);
        if (member.deactivated_at === null) throw new ConflictError('NOT_DEACTIVATED', `Member '${member.id}' is active.`);
        await tx.query('UPDATE members SET deactivated_at = NULL WHERE id = $1', [member.id]);
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'member.reactivated', detail: { targetMemberId: member.id }, at });
      });
      return { body: { reactivated: true, memberId: params.id } };
    },
  }),
  route.authed<z.infer<typeof roleBody>>('OA', {
    method: 'PUT',
    path: '/members/:id/role',
    statuses: [200, 400, 401, 403, 404, 409],
    summary: "Change a member's role (never to OWNER; the OWNER's role is not changed here)",
    body: roleBody,
    handler: async ({ services, principal, params, body }) => {
      const at = new Date(services.clock());
      const before = await services.db.transaction(async (tx) => {
        const member = await loadMember(tx, principal.workspaceId, params.id);
        if (member.role === 'OWNER') throw new ForbiddenError(principal.role === 'OWNER' ? 'The OWNER keeps the OWNER role (a workspace has one).' : 'An ADMIN cannot change the OWNER\'s role.');
        await tx.query('UPDATE members SET role = $2 WHERE id = $1', [member.id, body.role]);
        await recordAudit(tx, { workspaceId: principal.workspaceId, memberId: principal.memberId, kind: 'member.role_changed', detail: { targetMemberId: member.id, from: member.role, to: body.role }, at });
        return member.role;
      });
      return { body: { memberId: params.id, role: body.role, previousRole: before } };
    },
  }),
];
