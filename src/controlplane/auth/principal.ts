import { hashKey } from '../../config/runtime.js';
import type { Database } from '../db/database.js';
import type { TokenIssuer } from './tokens.js';

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

/** Whether the key or session behind `principal` still holds (not revoked, not expired). */
export async function credentialHolds(db: Database, principal: Principal): Promise<boolean> {
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
