import { createHash } from 'node:crypto';
import { hashKey } from '../../config/runtime.js';
import type { Queryable } from '../db/database.js';
import { newId } from '../ids.js';
import type { Services } from '../services.js';
import type { Role } from './principal.js';
import { newRefreshToken, newVirtualKey } from './tokens.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/**
 * Serialises every write that claims `email` (signup, invite, verification) for the rest of the
 * transaction, so two of them never both see the address free.
 */
export async function lockEmail(tx: Queryable, email: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`email:${email}`]);
}

/** Who holds an address: its verified user, if any, and the unverified claims still standing (newest first). */
export interface EmailHolders {
  verified: { id: string; password_hash: string } | undefined;
  unverified: Array<{ id: string; password_hash: string; created_at: Date }>;
}

/** Unverified claims a login tries, newest first; older ones can still verify and take the address. */
export const MAX_LOGIN_CLAIMS = 3;

export async function emailHolders(q: Queryable, email: string): Promise<EmailHolders> {
  const rows = await q.query<{ id: string; password_hash: string; created_at: Date; email_verified_at: Date | null }>(
    `SELECT id, password_hash, created_at, email_verified_at FROM users WHERE email = $1 AND superseded_at IS NULL
     ORDER BY (email_verified_at IS NOT NULL) DESC, created_at DESC LIMIT $2`,
    [email, MAX_LOGIN_CLAIMS + 1],
  );
  const verified = rows.find((r) => r.email_verified_at !== null);
  return { verified, unverified: verified === undefined ? rows.slice(0, MAX_LOGIN_CLAIMS) : [] };
}

export interface NewAccount {
  email: string;
  /** The scrypt hash of the chosen password. */
  passwordHash: string;
  name: string;
  workspaceName?: string | undefined;
  /** Created already verified (a sign-up completed through its emailed token). */
  verified?: boolean;
}

/** A user, their workspace on the free_trial plan with them as OWNER, and a first vk_ key; inside `tx`. */
export async function insertAccount(tx: Queryable, input: NewAccount) {
  const user = { id: newId.user(), email: input.email, name: input.name, emailVerified: input.verified === true };
  await tx.query(`INSERT INTO users (id, email, name, password_hash, email_verified_at) VALUES ($1, $2, $3, $4, CASE WHEN $5 THEN now() END)`, [
    user.id,
    input.email,
    input.name,
    input.passwordHash,
    user.emailVerified,
  ]);
  return { user, ...(await insertWorkspace(tx, { name: input.workspaceName ?? `${input.name}'s workspace`, ownerUserId: user.id, ownerName: input.name })) };
}

/** A workspace on the free_trial plan (in an org's team when given), its OWNER and their first vk_ key; inside `tx`. */
export async function insertWorkspace(tx: Queryable, input: { name: string; ownerUserId: string; ownerName: string; orgId?: string; teamId?: string }) {
  const workspace = { id: newId.workspace(), name: input.name, plan: 'free_trial', orgId: input.orgId ?? null, teamId: input.teamId ?? null };
  const memberId = newId.member();
  await tx.query('INSERT INTO workspaces (id, name, plan, org_id, team_id) VALUES ($1, $2, $3, $4, $5)', [workspace.id, workspace.name, workspace.plan, workspace.orgId, workspace.teamId]);
  await tx.query('INSERT INTO members (id, workspace_id, user_id, role, display_name) VALUES ($1, $2, $3, $4, $5)', [memberId, workspace.id, input.ownerUserId, 'OWNER', input.ownerName]);
  const apiKey = await createApiKey(tx, { memberId, workspaceId: workspace.id, name: 'default' });
  return { workspace, member: { id: memberId, role: 'OWNER' as Role }, apiKey };
}

/**
 * Every other standing claim on `email` loses it to `winnerId`, which has just verified it: their
 * login sessions end (their workspaces and keys stay). Returns the ended session ids.
 */
export async function supersedeClaims(tx: Queryable, email: string, winnerId: string): Promise<string[]> {
  const losers = await tx.query<{ id: string }>('UPDATE users SET superseded_at = now() WHERE email = $1 AND id <> $2 AND superseded_at IS NULL RETURNING id', [email, winnerId]);
  if (losers.length === 0) return [];
  const ended = await tx.query<{ id: string }>(
    'UPDATE sessions SET revoked_at = now() WHERE revoked_at IS NULL AND member_id IN (SELECT id FROM members WHERE user_id = ANY($1::text[])) RETURNING id',
    [losers.map((l) => l.id)],
  );
  return ended.map((s) => s.id);
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
