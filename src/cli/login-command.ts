import { hostname, homedir } from 'node:os';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { z } from 'zod';
import { ControlPlaneApi, ControlPlaneHttpError } from '../config/control-plane-api.js';
import { describeZodError } from '../config/zod-error.js';
import { DEFAULT_CONTROL_PLANE_URL } from '../gate/client.js';
import { loadSnapshot } from '../gate/snapshot.js';
import { snapshotPath } from '../gate/sync.js';
import { ConfigError } from '../lib/errors.js';
import { credentialsPath, deleteStoredCredentials, readStoredCredentials, writeStoredCredentials } from '../machine/credentials.js';
import { detectGateHarnesses, gateFileState, gateTargets } from '../machine/gates-install.js';
import { readSecretFromStdin } from './stdin.js';

/**
 * `svc login | logout | whoami | status`: this machine's identity with a control plane, kept in
 * `~/.svc/credentials.json` (0600) and read by every command, the gate client and the SDKs.
 */

interface Me {
  id: string;
  role: string;
  user: { email: string };
  workspace: { id: string; name: string };
}

const loginFlags = z
  .object({
    controlPlaneUrl: z.url({ protocol: /^https?$/ }),
    apiKey: z.string().regex(/^vk_[A-Za-z0-9_-]{8,200}$/, 'the API key is a vk_ key').optional(),
    email: z.email().max(320).optional(),
    passwordStdin: z.boolean(),
  })
  .refine((o) => o.apiKey !== undefined || o.email !== undefined, { message: 'give --api-key vk_…, or --email (the password is read from stdin or asked)' });

/** `--dev`: the local control plane; else the flag, SVC_CONTROL_PLANE_URL, the stored one, the local default. */
function controlPlaneUrl(flags: { controlPlaneUrl?: string; dev?: boolean }, env: NodeJS.ProcessEnv): string {
  if (flags.dev === true) return DEFAULT_CONTROL_PLANE_URL;
  return flags.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || readStoredCredentials(env)?.controlPlaneUrl || DEFAULT_CONTROL_PLANE_URL);
}

async function readPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin || !process.stdin.isTTY) return readSecretFromStdin();
  // Asked on the terminal without echoing it.
  let muted = false;
  const output = new Writable({ write: (chunk, _encoding, done) => (muted ? done() : process.stderr.write(chunk, done)) });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  const answer = new Promise<string>((resolve) => rl.question('Password: ', resolve));
  muted = true;
  const password = await answer;
  rl.close();
  process.stderr.write('\n');
  return password;
}

function describe(err: unknown): string {
  if (err instanceof ControlPlaneHttpError) return err.status === 401 ? 'the control plane refused the credentials (401)' : err.message;
  return `the control plane could not be reached: ${(err as Error).message}`;
}

async function me(api: ControlPlaneApi): Promise<Me> {
  return api.json<Me>('GET', '/auth/me');
}

export function registerLoginCommands(program: Command, fail: (err: unknown) => never): void {
  program
    .command('login')
    .description('sign this machine in to a control plane: --api-key vk_…, or --email with the password (stdin or asked); stored in ~/.svc/credentials.json')
    .option('--api-key <key>', 'a workspace key (vk_…)')
    .option('--email <address>', 'sign in with an e-mail and password; a key is created for this machine')
    .option('--password-stdin', 'read the password from stdin', false)
    .option('--control-plane-url <url>', `the control plane (SVC_CONTROL_PLANE_URL; default ${DEFAULT_CONTROL_PLANE_URL})`)
    .option('--dev', `the local control plane (${DEFAULT_CONTROL_PLANE_URL})`, false)
    .action(async (opts: { apiKey?: string; email?: string; passwordStdin: boolean; controlPlaneUrl?: string; dev: boolean }) => {
      const env = process.env;
      const parsed = loginFlags.safeParse({ ...opts, controlPlaneUrl: controlPlaneUrl(opts, env) });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const flags = parsed.data;
      let apiKey = flags.apiKey;
      let keyId: string | undefined;
      try {
        if (apiKey === undefined) {
          const password = await readPassword(flags.passwordStdin);
          const anonymous = new ControlPlaneApi({ controlPlaneUrl: flags.controlPlaneUrl, apiKey: '' });
          const session = await anonymous.json<{ accessToken: string }>('POST', '/auth/login', { email: flags.email, password });
          const withToken = new ControlPlaneApi({ controlPlaneUrl: flags.controlPlaneUrl, apiKey: session.accessToken });
          const key = await withToken.json<{ id: string; key: string }>('POST', '/keys', { name: `svc login on ${hostname()}`.slice(0, 128) });
          apiKey = key.key;
          keyId = key.id;
        }
        const identity = await me(new ControlPlaneApi({ controlPlaneUrl: flags.controlPlaneUrl, apiKey }));
        const file = await writeStoredCredentials(
          { apiKey, controlPlaneUrl: flags.controlPlaneUrl, workspaceId: identity.workspace.id, memberId: identity.id, email: identity.user.email, role: identity.role, ...(keyId === undefined ? {} : { keyId }) },
          env,
        );
        process.stdout.write(`logged in as ${identity.user.email} (${identity.role}) to workspace ${identity.workspace.name} (${identity.workspace.id}) at ${flags.controlPlaneUrl}\ncredentials: ${file}\n`);
      } catch (err) {
        process.stderr.write(`svc login: ${describe(err)}\n`);
        process.exitCode = 1;
      }
    });

  program
    .command('logout')
    .description('forget the stored credentials (and revoke the key svc login created for this machine)')
    .action(async () => {
      const env = process.env;
      const stored = readStoredCredentials(env);
      if (stored === null) {
        process.stdout.write('not logged in\n');
        return;
      }
      if (stored.keyId !== undefined && stored.controlPlaneUrl !== undefined) {
        const api = new ControlPlaneApi({ controlPlaneUrl: stored.controlPlaneUrl, apiKey: stored.apiKey, timeoutMs: 3000 });
        await api.call('DELETE', `/keys/${encodeURIComponent(stored.keyId)}`).then(
          () => process.stdout.write(`revoked this machine's key ${stored.keyId}\n`),
          (err: unknown) => process.stderr.write(`svc logout: the key ${stored.keyId} could not be revoked (${describe(err)}); revoke it in the control plane\n`),
        );
      }
      await deleteStoredCredentials(env);
      process.stdout.write('logged out\n');
    });

  program
    .command('whoami')
    .description('the identity the stored credentials (or SVC_API_KEY) sign in as')
    .option('--json', 'as JSON', false)
    .action(async (opts: { json: boolean }) => {
      const env = process.env;
      const stored = readStoredCredentials(env);
      const apiKey = env.SVC_API_KEY || stored?.apiKey;
      if (!apiKey) {
        process.stderr.write('not logged in: run svc login\n');
        process.exit(1);
      }
      const url = controlPlaneUrl({}, env);
      try {
        const identity = await me(new ControlPlaneApi({ controlPlaneUrl: url, apiKey }));
        process.stdout.write(
          opts.json ? `${JSON.stringify({ ...identity, controlPlaneUrl: url })}\n` : `${identity.user.email} (${identity.role}) in workspace ${identity.workspace.name} (${identity.workspace.id}) at ${url}\n`,
        );
      } catch (err) {
        process.stderr.write(`svc whoami: ${describe(err)}\n`);
        process.exit(1);
      }
    });

  program
    .command('status')
    .description('authentication, the harnesses found and whether their gate is installed, and the policy snapshot')
    .option('--json', 'as JSON', false)
    .action(async (opts: { json: boolean }) => {
      const env = process.env;
      const stored = readStoredCredentials(env);
      const apiKey = env.SVC_API_KEY || stored?.apiKey;
      const url = controlPlaneUrl({}, env);
      let auth: { state: 'not logged in' | 'ok' | 'refused' | 'unreachable'; detail: string };
      if (!apiKey) auth = { state: 'not logged in', detail: 'run svc login' };
      else {
        try {
          const identity = await me(new ControlPlaneApi({ controlPlaneUrl: url, apiKey, timeoutMs: 3000 }));
          auth = { state: 'ok', detail: `${identity.user.email} (${identity.role}), workspace ${identity.workspace.id}` };
        } catch (err) {
          auth = { state: err instanceof ControlPlaneHttpError && err.status === 401 ? 'refused' : 'unreachable', detail: describe(err) };
        }
      }
      const home = env.HOME || homedir();
      const harnesses = await Promise.all(
        gateTargets(home, detectGateHarnesses(home)).map(async (target) => ({ harness: target.harness, gateInstalled: (await gateFileState(target)).installed, file: target.file })),
      );
      const snapshot = await loadSnapshot(snapshotPath(env), env.SVC_WORKSPACE_ID || stored?.workspaceId || '');
      const report = {
        controlPlaneUrl: url,
        credentials: stored === null ? null : credentialsPath(env),
        auth,
        harnesses,
        snapshot: { path: snapshotPath(env), trusted: snapshot.trusted, workspaceId: snapshot.workspaceId, problem: snapshot.problem },
      };
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(report)}\n`);
        return;
      }
      const lines = [
        `control plane: ${url}`,
        `auth: ${auth.state} (${auth.detail})`,
        `harnesses: ${harnesses.length === 0 ? 'none found' : harnesses.map((h) => `${h.harness} (gate ${h.gateInstalled ? 'installed' : 'not installed'})`).join(', ')}`,
        `policy snapshot: ${snapshot.trusted ? `trusted, workspace ${snapshot.workspaceId}` : `not trusted: ${snapshot.problem}`}`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
