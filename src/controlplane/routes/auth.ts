import { z } from 'zod';
import { password, signupBody, signupOrgBody } from '../contracts/auth.js';
import { emailHolders, insertAccount, lockEmail, normalizeEmail, openSession, refreshSession } from '../auth/accounts.js';
import { resendVerification, sendPendingSignup, sendSignupVerification, verifyEmail } from '../auth/verification.js';
import { ConflictError, NotFoundError, RateLimitedError, SignupDisabledError, UnauthorizedError } from '../errors.js';
import { insertOrg, insertTeam, orgView, teamView } from '../orgs/store.js';
import { route, type ClientInfo, type Route } from '../router.js';
import type { Services } from '../services.js';
import { addressSubject } from '../throttle/throttle.js';

const registerBody = z.strictObject({ email: z.email().max(256), password, name: z.string().min(1).max(128) });
const loginBody = z.strictObject({ email: z.string().min(1).max(256), password: z.string().min(1).max(1024) });
const refreshBody = z.strictObject({ refreshToken: z.string().min(1).max(512) });
const changePasswordBody = z.strictObject({ currentPassword: z.string().min(1).max(1024), newPassword: password });
/** Any string: one that is not 64 hexadecimal characters is answered TOKEN_INVALID like an unknown one. */
const verifyEmailBody = z.strictObject({ token: z.string().max(1024) });
const resendBody = z.strictObject({ email: z.string().min(1).max(256) });

const ADDRESS_TAKEN = (email: string) =>
  new ConflictError(
    'EMAIL_ALREADY_EXISTS',
    `An account with the email ${email} already exists. If the address is yours and that account was never verified, a message sent to it lets you complete this sign-up.`,
  );

/** What an org sign-up creates around the new workspace: the org (owned by the new user) and a first team. */
interface OrgSignup {
  orgName: string;
  teamName: string;
}

async function signUp(services: Services, body: z.infer<typeof signupBody>, client: ClientInfo, orgSignup?: OrgSignup) {
  if (!services.settings.signupEnabled) throw new SignupDisabledError();
  await services.throttle.take('signupAddress', addressSubject(client.address));
  const email = normalizeEmail(body.email);
  const passwordHash = await services.passwords.hash(body.password);
  const outcome = await services.db.transaction(async (tx) => {
    await lockEmail(tx, email);
    const holders = await emailHolders(tx, email);
    if (holders.verified !== undefined) return { taken: 'verified' as const };
    if (holders.unverified.length > 0) return { taken: 'unverified' as const };
    const account = await insertAccount(tx, { email, passwordHash, name: body.name, workspaceName: body.workspaceName });
    if (orgSignup === undefined) return { account };
    const org = await insertOrg(tx, { name: orgSignup.orgName, ownerUserId: account.user.id, workspaceId: account.workspace.id });
    const team = (await insertTeam(tx, org.id, orgSignup.teamName))!;
    await tx.query('UPDATE workspaces SET team_id = $2 WHERE id = $1', [account.workspace.id, team.id]);
    return { account: { ...account, workspace: { ...account.workspace, orgId: org.id, teamId: team.id } }, org: orgView(org), team: teamView(team) };
  });
  if (outcome.taken !== undefined) {
    if (outcome.taken === 'unverified' && (await mayMail(services, email))) {
      await sendPendingSignup(services, email, { name: body.name, workspaceName: body.workspaceName ?? null, passwordHash });
    }
    throw ADDRESS_TAKEN(email);
  }
  const account = outcome.account;
  await sendSignupVerification(services, account.user, account.workspace.name);
  return {
    status: 201,
    body: {
      ...(outcome.org === undefined ? {} : { org: outcome.org, team: outcome.team }),
      user: account.user,
      workspace: account.workspace,
      member: account.member,
      apiKey: account.apiKey,
      ...(await openSession(services, account.member.id)),
    },
  };
}

/** Messages to one address share resend-verification's limit (2 a minute), so nobody can flood a mailbox. */
async function mayMail(services: Services, email: string): Promise<boolean> {
  try {
    await services.throttle.take('resendEmail', email);
    return true;
  } catch (err) {
    if (err instanceof RateLimitedError) return false;
    throw err;
  }
}

export const authRoutes: Route[] = [
  route.public({
    method: 'POST',
    path: '/auth/signup',
    summary: 'Create a user, a workspace on the free_trial plan and a virtual API key; a verification token is mailed',
    body: signupBody,
    invalidBodyStatus: 422,
    statuses: [201, 409, 422, 429, 503],
    handler: ({ services, body, client }) => signUp(services, body, client),
  }),
  route.public<z.infer<typeof signupOrgBody>>({
    method: 'POST',
    path: '/auth/signup/org',
    summary: 'Sign up as an org: the user, an org they own, its first team and a workspace in it, a virtual API key; a verification token is mailed',
    body: signupOrgBody,
    invalidBodyStatus: 422,
    statuses: [201, 409, 422, 429, 503],
    handler: ({ services, body, client }) => {
      const { orgName, teamName, ...account } = body;
      return signUp(services, account, client, { orgName, teamName });
    },
  }),
  route.public({
    method: 'POST',
    path: '/auth/register',
    summary: 'Create an account (as signup, answering 400 on an invalid body)',
    body: registerBody,
    statuses: [201, 400, 409, 429, 503],
    handler: ({ services, body, client }) => signUp(services, body, client),
  }),
  route.public({
    method: 'POST',
    path: '/auth/login',
    summary: 'Exchange email and password for an access token and an rt_ refresh token',
    body: loginBody,
    statuses: [200, 400, 401, 429],
    handler: async ({ services, body, client }) => {
      const email = normalizeEmail(body.email);
      const fromAddress = await services.throttle.take('loginAddress', addressSubject(client.address));
      await services.throttle.take('loginAccount', email);
      const holders = await emailHolders(services.db, email);
      const candidates = holders.verified !== undefined ? [holders.verified] : holders.unverified;
      let user: { id: string; password_hash: string } | undefined;
      // An unknown email costs one verification too, so the answer takes as long as for a known one.
      if (candidates.length === 0) await services.passwords.verifyDummy(body.password);
      for (const candidate of candidates) {
        if (await services.passwords.verify(body.password, candidate.password_hash)) {
          user = candidate;
          break;
        }
      }
      const [member] = user === undefined ? [] : await services.db.query<{ id: string }>('SELECT id FROM members WHERE user_id = $1 ORDER BY created_at LIMIT 1', [user.id]);
      if (user === undefined || member === undefined) throw new UnauthorizedError('Invalid email or password.');
      await fromAddress.succeeded();
      await services.throttle.clear('loginAccount', email);
      if (services.passwords.needsRehash(user.password_hash)) {
        const rehashed = await services.passwords.hash(body.password);
        await services.db.query('UPDATE users SET password_hash = $2 WHERE id = $1 AND password_hash = $3', [user.id, rehashed, user.password_hash]);
      }
      return { body: await openSession(services, member.id) };
    },
  }),
  route.public({
    method: 'POST',
    path: '/auth/refresh',
    summary: 'Exchange a refresh token for a new access token (the refresh token is rotated)',
    body: refreshBody,
    statuses: [200, 400, 401, 429],
    handler: async ({ services, body, client }) => {
      const attempt = await services.throttle.take('refreshAddress', addressSubject(client.address));
      const session = await refreshSession(services, body.refreshToken);
      if (session === undefined) throw new UnauthorizedError('The refresh token is invalid or expired.');
      await attempt.succeeded();
      return { body: session };
    },
  }),
  route.public({
    method: 'POST',
    path: '/auth/verify-email',
    summary: 'Confirm an email address with the 64-character token mailed to it',
    body: verifyEmailBody,
    statuses: [200, 400, 410, 429],
    handler: async ({ services, body, client }) => {
      const attempt = await services.throttle.take('verifyAddress', addressSubject(client.address));
      const verified = await verifyEmail(services, body.token);
      await attempt.succeeded();
      return { body: { verified: true, email: verified.email } };
    },
  }),
  route.public({
    method: 'POST',
    path: '/auth/resend-verification',
    summary: 'Mail a new verification token to an unverified address (2 a minute per email)',
    body: resendBody,
    statuses: [200, 400, 404, 409, 429],
    handler: async ({ services, body, client }) => {
      const email = normalizeEmail(body.email);
      await services.throttle.take('resendAddress', addressSubject(client.address));
      await services.throttle.take('resendEmail', email);
      const { sent } = await resendVerification(services, email);
      return { body: { sent: sent > 0, email } };
    },
  }),
  route.authed('SESSION', {
    method: 'POST',
    path: '/auth/logout',
    summary: 'Invalidate the current session (its access and refresh tokens) and close its sync sockets',
    statuses: [200, 401],
    handler: async ({ services, principal }) => {
      await services.db.query('UPDATE sessions SET revoked_at = now() WHERE id = $1', [principal.sessionId]);
      services.sockets.sessionsEnded([principal.sessionId!]);
      return { body: { loggedOut: true } };
    },
  }),
  route.authed('SESSION', {
    method: 'POST',
    path: '/auth/change-password',
    summary: "Change the caller's password; every other session of the user is signed out",
    body: changePasswordBody,
    statuses: [200, 400, 401, 429],
    handler: async ({ services, principal, body }) => {
      const [user] = await services.db.query<{ password_hash: string; email: string }>('SELECT password_hash, email FROM users WHERE id = $1', [principal.userId]);
      if (user === undefined) throw new UnauthorizedError('The current password is incorrect.');
      // Guesses of the current password count against the account, as failed logins do.
      await services.throttle.take('loginAccount', user.email);
      if (!(await services.passwords.verify(body.currentPassword, user.password_hash))) throw new UnauthorizedError('The current password is incorrect.');
      await services.throttle.clear('loginAccount', user.email);
      const hash = await services.passwords.hash(body.newPassword);
      const ended = await services.db.transaction(async (tx) => {
        await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [principal.userId, hash]);
        return tx.query<{ id: string }>(
          'UPDATE sessions SET revoked_at = now() WHERE id <> $2 AND revoked_at IS NULL AND member_id IN (SELECT id FROM members WHERE user_id = $1) RETURNING id',
          [principal.userId, principal.sessionId],
        );
      });
      services.sockets.sessionsEnded(ended.map((s) => s.id));
      return { body: { changed: true } };
    },
  }),
  route.authed('A', {
    method: 'GET',
    path: '/auth/me',
    summary: 'The calling member, their user and workspace',
    statuses: [200, 401, 404],
    handler: async ({ services, principal }) => {
      const [row] = await services.db.query<Record<string, unknown>>(
        `SELECT m.id, m.role, m.display_name, m.created_at, u.id AS user_id, u.email, u.name, u.email_verified_at IS NOT NULL AS email_verified,
                w.id AS workspace_id, w.name AS workspace_name, w.plan
         FROM members m JOIN users u ON u.id = m.user_id JOIN workspaces w ON w.id = m.workspace_id WHERE m.id = $1`,
        [principal.memberId],
      );
      if (row === undefined) throw new NotFoundError('Member not found.');
      return {
        body: {
          id: row.id,
          role: row.role,
          displayName: row.display_name,
          user: { id: row.user_id, email: row.email, name: row.name, emailVerified: row.email_verified },
          workspace: { id: row.workspace_id, name: row.workspace_name, plan: row.plan },
        },
      };
    },
  }),
];
