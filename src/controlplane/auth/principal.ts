import { hashKey } from '../../config/runtime.js';
import type { Database } from '../db/database.js';
import { GATEWAY_TOKEN_PREFIX, type TokenIssuer } from './tokens.js';

export const ROLES = ['OWNER', 'ADMIN', 'EM', 'DEVELOPER', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];

/** The member a request acts as, and how it proved it. */
export interface Principal {
  readonly memberId: string;
  readonly userId: string;
  readonly workspaceId: string;
  readonly role: Role;
  /** Set when the caller used a login access token (unset for a vk_ key). */
  readonly sessionId: string | undefined;
  /** Set when the caller used a vk_ key. */
  readonly keyId?: string | undefined;
  /**
   * Set when the caller used a gateway's own `gwt_` token: it acts for the workspace as the member
   * who registered the gateway, and may call only the routes a gateway needs.
   */
  readonly gateway?: { readonly id: string; readonly tokenHash: string } | undefined;
}

interface MemberRow {
  key_id?: string;
  member_id: string;
  user_id: string;
  workspace_id: string;
  role: Role;
}

const MEMBER_COLUMNS = 'm.id AS member_id, m.user_id, m.workspace_id, m.role';

/** The principal behind `Authorization: Bearer <access token | vk_ key>`, or undefined. */
export async function resolvePrincipal(db: Database, tokens: TokenIssuer, authorization: string): Promise<Principal | undefined> {
  const match = /^bearer\s+(\S+)\s*$/i.exec(authorization);
  if (match === null) return undefined;
  const token = match[1]!;
  if (token.startsWith(GATEWAY_TOKEN_PREFIX)) return gatewayPrincipal(db, token);
  if (token.startsWith('vk_')) {
    const [row] = await db.query<MemberRow>(
      `SELECT k.id AS key_id, ${MEMBER_COLUMNS} FROM api_keys k JOIN members m ON m.id = k.member_id
       WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND m.deactivated_at IS NULL`,
      [hashKey(token)],
    );
    return row && { memberId: row.member_id, userId: row.user_id, workspaceId: row.workspace_id, role: row.role, sessionId: undefined, keyId: row.key_id };
  }
  const claims = tokens.verifyAccess(token);
  if (claims === undefined) return undefined;
  const [row] = await db.query<MemberRow>(
    `SELECT ${MEMBER_COLUMNS} FROM sessions s JOIN members m ON m.id = s.member_id
     WHERE s.id = $1 AND s.member_id = $2 AND s.revoked_at IS NULL AND s.expires_at > now() AND m.deactivated_at IS NULL`,
    [claims.sid, claims.sub],
  );
  return row && { memberId: row.member_id, userId: row.user_id, workspaceId: row.workspace_id, role: row.role, sessionId: claims.sid };
}

/**
 * The principal of a gateway token: the current one, or the one it replaced while its grace lasts.
 * The gateway keeps working after the member who registered it is deactivated (it belongs to the
 * workspace); it takes the DEVELOPER role, and the router lets it reach only gateway routes.
 */
async function gatewayPrincipal(db: Database, token: string): Promise<Principal | undefined> {
  const tokenHash = hashKey(token);
  const [row] = await db.query<{ id: string; workspace_id: string; member_id: string; user_id: string }>(
    `SELECT g.id, g.workspace_id, m.id AS member_id, m.user_id FROM gateways g JOIN members m ON m.id = g.registered_by
     WHERE g.revoked_at IS NULL AND (g.token_hash = $1 OR (g.previous_token_hash = $1 AND g.previous_token_valid_until > now()))`,
    [tokenHash],
  );
  return row && { memberId: row.member_id, userId: row.user_id, workspaceId: row.workspace_id, role: 'DEVELOPER', sessionId: undefined, gateway: { id: row.id, tokenHash } };
}

/** Whether the key, session or gateway token behind `principal` still holds (not revoked, not expired). */
export async function credentialHolds(db: Database, principal: Principal): Promise<boolean> {
  if (principal.gateway !== undefined) {
    const { id, tokenHash } = principal.gateway;
    return (
      (
        await db.query(
          `SELECT 1 FROM gateways WHERE id = $1 AND revoked_at IS NULL AND (token_hash = $2 OR (previous_token_hash = $2 AND previous_token_valid_until > now()))`,
          [id, tokenHash],
        )
      ).length > 0
    );
  }
  if (principal.keyId !== undefined) {
    return (await db.query('SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL', [principal.keyId])).length > 0;
  }
  if (principal.sessionId !== undefined) {
    return (await db.query('SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NULL AND expires_at > now()', [principal.sessionId])).length > 0;
  }
  return false;
}

const ALLOWED: Record<'A' | 'OA' | 'OAE' | 'OAED' | 'SESSION', readonly Role[]> = {
  A: ROLES,
  SESSION: ROLES,
  OA: ['OWNER', 'ADMIN'],
  OAE: ['OWNER', 'ADMIN', 'EM'],
  OAED: ['OWNER', 'ADMIN', 'EM', 'DEVELOPER'],
};

export function roleAllowed(access: 'A' | 'OA' | 'OAE' | 'OAED' | 'SESSION', role: Role): boolean {
  return ALLOWED[access].includes(role);
}
