import { createHash } from 'node:crypto';
import { hashKey } from '../../config/runtime.js';
import type { Queryable } from '../db/database.js';
import { ConflictError } from '../errors.js';
import { newId } from '../ids.js';
import type { Services } from '../services.js';
import { hashPassword } from './passwords.js';
import type { Role } from './principal.js';
import { newRefreshToken, newVirtualKey } from './tokens.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export interface NewAccount {
  email: string;
  password: string;
  name: string;
  workspaceName?: string | undefined;
}

/** A user, their workspace on the free_trial plan with them as OWNER, and a first vk_ key. */
export async function createAccount(services: Services, input: NewAccount) {
  const passwordHash = await hashPassword(input.password);
  const email = input.email.toLowerCase();
  return services.db.transaction(async (tx) => {
    const taken = await tx.query('SELECT 1 FROM users WHERE email = $1', [email]);
    if (taken.length > 0) throw new ConflictError('EMAIL_ALREADY_EXISTS', `An account with the email ${email} already exists.`);
    const user = { id: newId.user(), email, name: input.name };
    const workspace = { id: newId.workspace(), name: input.workspaceName ?? `${input.name}'s workspace`, plan: 'free_trial' };
    const memberId = newId.member();
    await tx.query('INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)', [user.id, email, input.name, passwordHash]);
    await tx.query('INSERT INTO workspaces (id, name, plan) VALUES ($1, $2, $3)', [workspace.id, workspace.name, workspace.plan]);
    await tx.query('INSERT INTO members (id, workspace_id, user_id, role, display_name) VALUES ($1, $2, $3, $4, $5)', [memberId, workspace.id, user.id, 'OWNER', input.name]);
    const apiKey = await createApiKey(tx, { memberId, workspaceId: workspace.id, name: 'default' });
    return { user, workspace, member: { id: memberId, role: 'OWNER' as Role }, apiKey };
  });
}

/** Stores only the key's sha256, the same hash the proxy matches incoming vk_ keys against. */
export async function createApiKey(tx: Queryable, owner: { memberId: string; workspaceId: string; name: string }) {
  const key = newVirtualKey();
  const id = newId.key();
  const lastFour = key.slice(-4);
  const [row] = await tx.query<{ created_at: Date }>(
    'INSERT INTO api_keys (id, member_id, workspace_id, name, key_hash, last_four) VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at',
    [id, owner.memberId, owner.workspaceId, owner.name, hashKey(key), lastFour],
  );
  return { id, key, name: owner.name, last_four: lastFour, createdAt: row!.created_at.toISOString() };
}

export interface IssuedSession {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

/** A new login session for the member: an access JWT and an `rt_` refresh token (stored hashed). */
export async function openSession(services: Services, memberId: string): Promise<IssuedSession> {
  const sessionId = newId.session();
  const refreshToken = newRefreshToken();
  await services.db.query(
    `INSERT INTO sessions (id, member_id, refresh_hash, expires_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4))`,
    [sessionId, memberId, sha256(refreshToken), services.settings.refreshTtlSeconds],
  );
  return { accessToken: services.tokens.issueAccess(memberId, sessionId), refreshToken, tokenType: 'Bearer', expiresIn: services.tokens.accessTtlSeconds };
}

/**
 * Exchanges a refresh token: the session stays, its refresh token is rotated (the old one stops
 * working) and a new access token is issued. Undefined when the token is unknown, revoked or expired.
 */
export async function refreshSession(services: Services, refreshToken: string): Promise<IssuedSession | undefined> {
  const next = newRefreshToken();
  const [row] = await services.db.query<{ id: string; member_id: string }>(
    `UPDATE sessions SET refresh_hash = $2 WHERE refresh_hash = $1 AND revoked_at IS NULL AND expires_at > now() RETURNING id, member_id`,
    [sha256(refreshToken), sha256(next)],
  );
  if (row === undefined) return undefined;
  return { accessToken: services.tokens.issueAccess(row.member_id, row.id), refreshToken: next, tokenType: 'Bearer', expiresIn: services.tokens.accessTtlSeconds };
}
