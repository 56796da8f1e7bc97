import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import type { ScryptCost } from '../../src/controlplane/auth/passwords.js';
import type { Mailer } from '../../src/controlplane/mail/mailer.js';
import { startControlPlane, type RunningControlPlane } from '../../src/controlplane/start.js';
import type { ThrottleRules } from '../../src/controlplane/throttle/throttle.js';
import type { Logger } from '../../src/lib/logger.js';
import type { DeliveryTuning } from '../../src/controlplane/delivery/dispatcher.js';
import { createLogger } from '../../src/lib/logger.js';
import { seedEmbeddedDatabase } from './pglite-template.js';
import { postgresUrl } from './postgres.js';

export { postgresUrl };

export interface Teardown {
  teardown(fn: () => unknown): void;
}

export type Backend = 'pglite' | 'postgres';

export interface TestControlPlane extends RunningControlPlane {
  url: string;
  home: string;
}

export interface TestControlPlaneOptions {
  backend?: Backend;
  signupEnabled?: boolean;
  providerBaseUrl?: string;
  /** Reuse a home (and so the embedded database and key) of an earlier control plane. */
  home?: string;
  port?: number;
  allowPrivateUpstreams?: boolean;
  valkeyUrl?: string;
  mailer?: Mailer;
  logger?: Logger;
  verificationTtlSeconds?: number;
  /** The scrypt cost; tests default to a cheap one (production is N = 2^17). */
  passwordCost?: ScryptCost;
  /**
   * Throttle limits. Tests default to the production per-account limits and lifted per-address
   * ones (every test calls from 127.0.0.1); 'production' keeps every production limit.
   */
  throttle?: Partial<ThrottleRules> | 'production';
  socketRecheckMs?: number;
  /** The control plane's clock (holds expire by it). */
  clock?: () => number;
  /** Delivery timings (tests shorten the retry backoff and the poll). */
  delivery?: Partial<DeliveryTuning>;
  env?: NodeJS.ProcessEnv;
}

/** Delivery fast enough for tests: retries after 20 ms, 80 ms, 320 ms, … */
export const TEST_DELIVERY: Partial<DeliveryTuning> = { webhookBackoffMs: 20, siemBackoffMs: 20, timeoutMs: 3000 };

/** Cheap enough for tests (1 MiB, about a millisecond); production hashes at N = 2^17. */
export const TEST_PASSWORD_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 };

const LIFTED = { limit: 1_000_000, windowSeconds: 60 };
const TEST_THROTTLE: Partial<ThrottleRules> = { loginAddress: LIFTED, signupAddress: LIFTED, refreshAddress: LIFTED, resendAddress: LIFTED, verifyAddress: LIFTED };

/** A control plane in this process on a free port, its home in a temp dir, its PostgreSQL schema dropped afterwards. */
export async function startTestControlPlane(t: Teardown, opts: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  const home = opts.home ?? (await mkdtemp(join(tmpdir(), 'svc-cp-')));
  if (opts.home === undefined) t.teardown(() => rm(home, { recursive: true, force: true }));
  let databaseUrl: string | undefined;
  let schema: string | undefined;
  if (opts.backend === 'postgres') {
    databaseUrl = await postgresUrl();
    schema = `svc_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const url = databaseUrl;
    const dropSchema = schema;
    t.teardown(async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${dropSchema} CASCADE`);
      await client.end();
    });
  } else {
    await seedEmbeddedDatabase(home);
  }
  const running = await startControlPlane({
    host: '127.0.0.1',
    port: opts.port ?? 0,
    home,
    databaseUrl,
    databaseSchema: schema,
    secretKey: undefined,
    valkeyUrl: opts.valkeyUrl,
    ...(opts.mailer === undefined ? {} : { mailer: opts.mailer }),
    settings: {
      signupEnabled: opts.signupEnabled ?? true,
      providerBaseUrl: opts.providerBaseUrl,
      refreshTtlSeconds: 3600,
      allowPrivateUpstreams: opts.allowPrivateUpstreams,
      verificationTtlSeconds: opts.verificationTtlSeconds,
    },
    logger: opts.logger ?? createLogger('silent'),
    testing: {
      passwordCost: opts.passwordCost ?? TEST_PASSWORD_COST,
      throttle: opts.throttle === 'production' ? {} : (opts.throttle ?? TEST_THROTTLE),
      socketRecheckMs: opts.socketRecheckMs,
      strictDocumentation: true,
      delivery: { ...TEST_DELIVERY, ...opts.delivery },
    },
    clock: opts.clock,
    env: opts.env ?? { SVC_HOME: home },
  });
  t.teardown(() => running.close());
  return { ...running, url: `http://127.0.0.1:${running.port}`, home };
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

/** One JSON call to the control plane under /api/v1. */
export async function api<T = any>(
  cp: { url: string },
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<ApiResponse<T>> {
  const res = await request(`${cp.url}/api/v1${path}`, {
    method: method as 'GET',
    headers: {
      ...(opts.body !== undefined || opts.rawBody !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
      ...opts.headers,
    },
    body: opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text.length > 0 ? JSON.parse(text) : undefined, headers: res.headers };
}

let accounts = 0;

export interface Account {
  email: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  apiKey: string;
  workspaceId: string;
  memberId: string;
}

/** Signs a new owner up and returns their tokens and key. */
export async function signUp(cp: { url: string }, overrides: Partial<{ email: string; password: string; name: string }> = {}): Promise<Account> {
  const email = overrides.email ?? `owner${++accounts}-${process.pid}-${Date.now()}@example.com`;
  const password = overrides.password ?? 'correct horse battery';
  const res = await api(cp, 'POST', '/auth/signup', { body: { email, password, name: overrides.name ?? 'Owner' } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  return {
    email,
    password,
    accessToken: res.body.accessToken,
    refreshToken: res.body.refreshToken,
    apiKey: res.body.apiKey.key,
    workspaceId: res.body.workspace.id,
    memberId: res.body.member.id,
  };
}

/** Invites a member with the role, logs them in and returns their access token and a vk_ key of theirs. */
export async function memberWithRole(cp: { url: string }, owner: Account, role: 'ADMIN' | 'EM' | 'DEVELOPER' | 'VIEWER') {
  const email = `${role.toLowerCase()}-${++accounts}-${process.pid}@example.com`;
  const invite = await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body: { email, displayName: role, role, tempPassword: 'temporary-pass' } });
  if (invite.status !== 201) throw new Error(`invite failed: ${invite.status} ${JSON.stringify(invite.body)}`);
  const login = await api(cp, 'POST', '/auth/login', { body: { email, password: 'temporary-pass' } });
  const key = await api(cp, 'POST', '/keys', { token: login.body.accessToken, body: { name: `${role} key` } });
  return { accessToken: login.body.accessToken as string, apiKey: key.body.key as string, memberId: invite.body.memberId as string };
}

/** The messages the control plane's file sender wrote to its outbox, oldest first. */
export async function outbox(cp: { home: string }): Promise<Array<{ at: string; from: string; to: string; subject: string; text: string }>> {
  try {
    const text = await readFile(join(cp.home, 'controlplane', 'outbox', 'mail.jsonl'), 'utf8');
    return text.split('\n').filter(Boolean).map((line) => JSON.parse(line));
  } catch {
    return [];
  }
}

/** The verification token of the newest message to `email`, if any. */
export async function latestToken(cp: { home: string }, email: string): Promise<string | undefined> {
  const mails = (await outbox(cp)).filter((m) => m.to === email);
  return /\b[0-9a-f]{64}\b/.exec(mails.at(-1)?.text ?? '')?.[0];
}
