import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { openDatabase, type Database } from './db/database.js';
import { SecretBox } from './secrets.js';
import { ControlPlaneServer } from './server.js';
import type { ControlPlaneSettings } from './services.js';

export interface ControlPlaneOptions {
  host: string;
  port: number;
  /** The local state folder (~/.svc): the embedded database and the secret key file live under it. */
  home: string;
  /** PostgreSQL instead of the embedded database. */
  databaseUrl?: string | undefined;
  /** PostgreSQL schema to use (created if missing). */
  databaseSchema?: string | undefined;
  /** SVC_SECRET_KEY; without it a key file under `home` is used (created 0600). */
  secretKey?: string | undefined;
  settings: ControlPlaneSettings;
  logger: Logger;
}

export interface RunningControlPlane {
  server: ControlPlaneServer;
  db: Database;
  port: number;
  close(): Promise<void>;
}

export async function startControlPlane(options: ControlPlaneOptions): Promise<RunningControlPlane> {
  const dir = join(options.home, 'controlplane');
  const secrets = await SecretBox.load(options.secretKey, join(dir, 'secret.key'));
  const db = await openDatabase({ databaseUrl: options.databaseUrl, schema: options.databaseSchema, dataDir: join(dir, 'db') });
  const server = new ControlPlaneServer({ host: options.host, port: options.port, db, secrets, logger: options.logger, settings: options.settings });
  let port: number;
  try {
    port = await server.listen();
  } catch (err) {
    await db.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    server,
    db,
    port,
    close() {
      closing ??= server.close().then(() => db.close());
      return closing;
    },
  };
}
