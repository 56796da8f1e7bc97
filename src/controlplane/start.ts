import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { PasswordHasher, type ScryptCost } from './auth/passwords.js';
import { openDatabase, type Database } from './db/database.js';
import { createMailer, type Mailer, type MailOptions } from './mail/mailer.js';
import { SecretBox } from './secrets.js';
import { ControlPlaneServer } from './server.js';
import type { ControlPlaneSettings } from './services.js';
import { securePrivateTree } from './state-files.js';
import { MemoryCounters, RedisCounters, type CounterStore } from './throttle/counters.js';
import { DEFAULT_THROTTLE_RULES, Throttle, type ThrottleRules } from './throttle/throttle.js';
import type { DeliveryTuning } from './delivery/dispatcher.js';

export interface ControlPlaneOptions {
  host: string;
  port: number;
  /** The local state folder (~/.svc): the embedded database, the secret key file and the mail outbox live under it. */
  home: string;
  /** PostgreSQL instead of the embedded database. */
  databaseUrl?: string | undefined;
  /** PostgreSQL schema to use (created if missing). */
  databaseSchema?: string | undefined;
  /** SVC_SECRET_KEY; without it a key file under `home` is used (created 0600). */
  secretKey?: string | undefined;
  /** Redis/Valkey shared by control planes for the auth throttles; without it they count in this process. */
  valkeyUrl?: string | undefined;
  /** Where mail goes; the default is the file outbox under `home`. */
  mail?: Partial<Omit<MailOptions, 'outbox'>> | undefined;
  /** A sender of the caller's own (tests). */
  mailer?: Mailer;
  settings: ControlPlaneSettings;
  logger: Logger;
  /**
   * Test-only knobs, never exposed on the command line: a cheaper scrypt cost (the default is
   * N = 2^17), other throttle limits, a shorter socket recheck interval.
   */
  testing?: { passwordCost?: ScryptCost; throttle?: Partial<ThrottleRules>; socketRecheckMs?: number; delivery?: Partial<DeliveryTuning>; strictDocumentation?: boolean };
  /** The control plane's clock (tests move it to see holds expire). */
  clock?: () => number;
  /** Where the hook gate reads its decide engine and pins from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningControlPlane {
  server: ControlPlaneServer;
  db: Database;
  port: number;
  close(): Promise<void>;
}

export const DEFAULT_MAIL_FROM = 'svc <no-reply@localhost>';

export async function startControlPlane(options: ControlPlaneOptions): Promise<RunningControlPlane> {
  const dir = join(options.home, 'controlplane');
  // Owner-only whatever the secret key's source: the folder holds the database and the outbox.
  await securePrivateTree(dir);
  const secrets = await SecretBox.load(options.secretKey, join(dir, 'secret.key'));
  const mailer =
    options.mailer ??
    (await createMailer({ transport: options.mail?.transport ?? 'file', smtpUrl: options.mail?.smtpUrl, from: options.mail?.from ?? DEFAULT_MAIL_FROM, outbox: join(dir, 'outbox', 'mail.jsonl') }));
  const counters: CounterStore = options.valkeyUrl === undefined ? new MemoryCounters() : new RedisCounters({ url: options.valkeyUrl, logger: options.logger });
  let db: Database;
  try {
    db = await openDatabase({ databaseUrl: options.databaseUrl, schema: options.databaseSchema, dataDir: join(dir, 'db') });
    // PGlite creates its files with the process's mask: take away what others could read.
    if (db.kind === 'pglite') await securePrivateTree(dir);
  } catch (err) {
    await counters.close();
    await mailer.close();
    throw err;
  }
  const server = new ControlPlaneServer({
    host: options.host,
    port: options.port,
    db,
    secrets,
    logger: options.logger,
    settings: options.settings,
    mailer,
    passwords: new PasswordHasher(options.testing?.passwordCost),
    throttle: new Throttle(counters, { ...DEFAULT_THROTTLE_RULES, ...options.testing?.throttle }),
    socketRecheckMs: options.testing?.socketRecheckMs,
    strictDocumentation: options.testing?.strictDocumentation,
    delivery: options.testing?.delivery,
    clock: options.clock,
    env: options.env,
  });
  let port: number;
  try {
    port = await server.listen();
  } catch (err) {
    await db.close();
    await counters.close();
    await mailer.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    server,
    db,
    port,
    close() {
      closing ??= server
        .close()
        .then(() => db.close())
        .finally(() => Promise.all([counters.close(), mailer.close()]));
      return closing.then(() => undefined);
    },
  };
}
