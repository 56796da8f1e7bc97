import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const BIN_ROOT = '/usr/lib/postgresql';

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The newest installed PostgreSQL's bin folder, or undefined. */
function serverBin(): string | undefined {
  try {
    const versions = readdirSync(BIN_ROOT).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    return versions.length === 0 ? undefined : join(BIN_ROOT, versions[0]!, 'bin');
  } catch {
    return undefined;
  }
}

/**
 * A private PostgreSQL of this test process: a fresh cluster in a temp dir on a free port, run as
 * the `postgres` user when the tests run as root (the server refuses root), killed and removed at exit.
 */
async function startPrivate(bin: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  const user: { uid?: number; gid?: number } = process.getuid?.() === 0 ? await postgresUser() : {};
  if (user.uid !== undefined && user.gid !== undefined) chownSync(dir, user.uid, user.gid);
  await promisify(execFile)(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync'], user);
  const port = await freePort();
  const args = ['-D', join(dir, 'data'), '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
  const server: ChildProcess = spawn(join(bin, 'postgres'), args, { ...user, stdio: 'ignore' });
  // The tests' own process must be free to exit; the cluster is disposable, so it is killed outright.
  server.unref();
  process.once('exit', () => {
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  for (let i = 0; i < 150; i++) {
    if (await answers(url)) return url;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`a private PostgreSQL from ${bin} did not start`);
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const id = (flag: string) => promisify(execFile)('id', [flag, 'postgres']).then((r) => Number(r.stdout));
  return { uid: await id('-u'), gid: await id('-g') };
}

let resolved: Promise<string> | undefined;

/**
 * A PostgreSQL for the tests: `$DATABASE_URL`, else the machine's local server if it answers, else
 * a private one started from the installed server binaries. Throws when there is none of these:
 * the PostgreSQL backend is tested, never silently left out.
 */
export function postgresUrl(): Promise<string> {
  resolved ??= (async () => {
    if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
    if (await answers(LOCAL_POSTGRES)) return LOCAL_POSTGRES;
    const bin = serverBin();
    if (bin === undefined) throw new Error('no PostgreSQL: set DATABASE_URL, run one on 127.0.0.1:5432, or install the server (apt-get install postgresql)');
    return startPrivate(bin);
  })();
  return resolved;
}
