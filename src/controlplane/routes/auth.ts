import { z } from 'zod';
import { createAccount, openSession, refreshSession } from '../auth/accounts.js';
import { hashPassword, verifyPassword } from '../auth/passwords.js';
import { SignupDisabledError, UnauthorizedError, NotFoundError } from '../errors.js';
import { route, type Route } from '../router.js';
import type { Services } from '../services.js';

const password = z.string().min(8).max(128);

const signupBody = z.strictObject({
  email: z.email(),
  password,
  name: z.string().min(1).max(128),
  workspaceName: z.string().min(1).max(64).optional(),
});

const registerBody = z.strictObject({ email: z.email().max(256), password, name: z.string().min(1).max(128) });
const loginBody = z.strictObject({ email: z.string().min(1).max(256), password: z.string().min(1).max(1024) });
const refreshBody = z.strictObject({ refreshToken: z.string().min(1).max(512) });
const changePasswordBody = z.strictObject({ currentPassword: z.string().min(1).max(1024), newPassword: password });

async function signUp(services: Services, body: z.infer<typeof signupBody>) {
  if (!services.settings.signupEnabled) throw new SignupDisabledError();
  const account = await createAccount(services, body);
  return {
    status: 201,
    body: {
      user: account.user,
      workspace: account.workspace,
      member: account.member,
      apiKey: account.apiKey,
      ...(await openSession(services, account.member.id)),
    },
  };
}

export const authRoutes: Route[] = [
  route.public({
    method: 'POST',
    path: '/auth/signup',
    summary: 'Create a user, a workspace on the free_trial plan and a virtual API key',
    body: signupBody,
    invalidBodyStatus: 422,
    handler: ({ services, body }) => signUp(services, body),
  }),
  route.public({
    method: 'POST',
    path: '/auth/register',
    summary: 'Create an account (as signup, answering 400 on an invalid body)',
    body: registerBody,
    handler: ({ services, body }) => signUp(services, body),
  }),
  route.public({
    method: 'POST',
    path: '/auth/login',
    summary: 'Exchange email and password for an access token and an rt_ refresh token',
    body: loginBody,
    handler: async ({ services, body }) => {
      const [row] = await services.db.query<{ password_hash: string; member_id: string }>(
        `SELECT u.password_hash, m.id AS member_id FROM users u JOIN members m ON m.user_id = u.id
         WHERE u.email = $1 ORDER BY m.created_at LIMIT 1`,
        [body.email.toLowerCase()],
      );
      if (row === undefined || !(await verifyPassword(body.password, row.password_hash))) throw new UnauthorizedError('Invalid email or password.');
      return { body: await openSession(services, row.member_id) };
    },
  }),
  route.public({
    method: 'POST',
    path: '/auth/refresh',
    summary: 'Exchange a refresh token for a new access token (the refresh token is rotated)',
    body: refreshBody,
    handler: async ({ services, body }) => {
      const session = await refreshSession(services, body.refreshToken);
      if (session === undefined) throw new UnauthorizedError('The refresh token is invalid or expired.');
      return { body: session };
    },
  }),
  route.authed('SESSION', {
    method: 'POST',
    path: '/auth/logout',
    summary: 'Invalidate the current session (its access and refresh tokens)',
    handler: async ({ services, principal }) => {
      await services.db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1', [principal.sessionId]);
      return { body: { loggedOut: true } };
    },
  }),
  route.authed('SESSION', {
    method: 'POST',
    path: '/auth/change-password',
    summary: "Change the caller's password; every other session of the user is signed out",
    body: changePasswordBody,
    handler: async ({ services, principal, body }) => {
      const [user] = await services.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE id = $1', [principal.userId]);
      if (user === undefined || !(await verifyPassword(body.currentPassword, user.password_hash))) throw new UnauthorizedError('The current password is incorrect.');
      const hash = await hashPassword(body.newPassword);
      await services.db.transaction(async (tx) => {
        await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [principal.userId, hash]);
        await tx.query(
          'UPDATE sessions SET revoked_at = now() WHERE id <> $2 AND revoked_at IS NULL AND member_id IN (SELECT id FROM members WHERE user_id = $1)',
          [principal.userId, principal.sessionId],
        );
      });
      return { body: { changed: true } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/auth/me',
    summary: 'The calling member, their user and workspace',
    handler: async ({ services, principal }) => {
      const [row] = await services.db.query<Record<string, unknown>>(
        `SELECT m.id, m.role, m.display_name, m.created_at, u.id AS user_id, u.email, u.name, w.id AS workspace_id, w.name AS workspace_name, w.plan
         FROM members m JOIN users u ON u.id = m.user_id JOIN workspaces w ON w.id = m.workspace_id WHERE m.id = $1`,
        [principal.memberId],
      );
      if (row === undefined) throw new NotFoundError('Member not found.');
      return {
        body: {
          id: row.id,
          role: row.role,
          displayName: row.display_name,
          user: { id: row.user_id, email: row.email, name: row.name },
          workspace: { id: row.workspace_id, name: row.workspace_name, plan: row.plan },
        },
      };
    },
  }),
];
