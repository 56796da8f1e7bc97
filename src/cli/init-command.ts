import { homedir, hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { ControlPlaneApi, ControlPlaneHttpError } from '../config/control-plane-api.js';
import { describeZodError } from '../config/zod-error.js';
import { DEFAULT_CONTROL_PLANE_URL } from '../gate/client.js';
import { controlPlaneSources, snapshotPath, writeSnapshot } from '../gate/sync.js';
import { ConfigError } from '../lib/errors.js';
import { readStoredCredentials, writeStoredCredentials } from '../machine/credentials.js';
import { recordManaged } from '../machine/managed-gates.js';
import { GATE_HARNESSES, gateTargets, rewriteGateHooks, type GateHarness } from '../machine/gates-install.js';
import { detectHarnesses, INIT_HARNESSES, pointAtProxy, type InitHarness } from '../machine/harness-config.js';
import { MCP_HARNESSES, mcpConfigTargets, rewriteMcpConfigs, type McpHarness } from '../machine/mcp-install.js';
import { PROXY_URL } from '../machine/exec.js';
import { readSecretFromStdin } from './stdin.js';
import { codexRules } from '../gate/codex-rules.js';
import { loadSnapshot } from '../gate/snapshot.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

export const initFlags = z.object({
  controlPlaneUrl: z.url({ protocol: /^https?$/ }),
  apiKey: z.string().regex(/^vk_[A-Za-z0-9_-]{8,200}$/, 'the API key is a vk_ key').optional(),
  email: z.email().max(320).optional(),
  name: z.string().min(1).max(128).default('svc user'),
  workspaceName: z.string().min(1).max(64).optional(),
  passwordStdin: z.boolean(),
  harness: z.array(z.enum(INIT_HARNESSES)).min(1).optional(),
  project: z.string().min(1),
  proxyUrl: z.url({ protocol: /^https?$/ }),
});

type InitFlags = z.infer<typeof initFlags>;

/**
 * The key this machine acts with: the one given, the one stored, or — from an e-mail and password —
 * a new workspace (sign-up) or the existing account's workspace, with a key made for this machine.
 */
async function machineKey(flags: InitFlags, env: NodeJS.ProcessEnv): Promise<{ apiKey: string; keyId?: string; created: boolean }> {
  if (flags.apiKey !== undefined) return { apiKey: flags.apiKey, created: false };
  if (flags.email === undefined) {
    if (env.SVC_API_KEY) return { apiKey: env.SVC_API_KEY, created: false };
    const stored = readStoredCredentials(env);
    // The key login or an earlier init made for this machine stays known as such (logout revokes it).
    if (stored !== null) return { apiKey: stored.apiKey, ...(stored.keyId === undefined ? {} : { keyId: stored.keyId }), created: false };
    throw new ConfigError('give --api-key vk_… to join a workspace, or --email (password on stdin) to create one or sign in');
  }
  const password = flags.passwordStdin ? await readSecretFromStdin() : '';
  if (password === '') throw new ConfigError('--email needs the password on stdin (--password-stdin)');
  const anonymous = new ControlPlaneApi({ controlPlaneUrl: flags.controlPlaneUrl, apiKey: '' });
  try {
    const signup = await anonymous.json<{ apiKey: { id: string; key: string } }>('POST', '/auth/signup', { email: flags.email, password, name: flags.name, ...(flags.workspaceName ? { workspaceName: flags.workspaceName } : {}) });
    return { apiKey: signup.apiKey.key, keyId: signup.apiKey.id, created: true };
  } catch (err) {
    if (!(err instanceof ControlPlaneHttpError && err.status === 409)) throw err;
  }
  const session = await anonymous.json<{ accessToken: string }>('POST', '/auth/login', { email: flags.email, password });
  const key = await new ControlPlaneApi({ controlPlaneUrl: flags.controlPlaneUrl, apiKey: session.accessToken }).json<{ id: string; key: string }>('POST', '/keys', { name: `svc init on ${hostname()}`.slice(0, 128) });
  return { apiKey: key.key, keyId: key.id, created: false };
}


/**
 * What `svc init` does, and `svc setup` in connected mode: the machine's key and stored credentials,
 * each harness pointed at the proxy, the snapshot, the gates and the MCP wrappers. Appends what it
 * did to `lines`; answers the key and the control plane it acted with.
 */
export async function initMachine(flags: InitFlags, env: NodeJS.ProcessEnv, lines: string[]): Promise<{ api: ControlPlaneApi; apiKey: string }> {
  const home = env.HOME || homedir();
  const key = await machineKey(flags, env);
  const api = new ControlPlaneApi({ controlPlaneUrl: flags.controlPlaneUrl, apiKey: key.apiKey });
  const me = await api.json<{ id: string; role: string; user: { email: string }; workspace: { id: string; name: string } }>('GET', '/auth/me');
  await writeStoredCredentials(
    { apiKey: key.apiKey, controlPlaneUrl: flags.controlPlaneUrl, workspaceId: me.workspace.id, memberId: me.id, email: me.user.email, role: me.role, ...(key.keyId === undefined ? {} : { keyId: key.keyId }) },
    env,
  );
  lines.push(`${key.created ? 'created' : 'joined'} workspace ${me.workspace.name} (${me.workspace.id}) as ${me.user.email} (${me.role})`);

  const harnesses: InitHarness[] = flags.harness ?? detectHarnesses(home);
  if (harnesses.length === 0) lines.push('no harness found (name one with --harness)');
  for (const harness of harnesses) {
    const change = await pointAtProxy(harness, home, withoutTrailingSlashes(flags.proxyUrl), key.apiKey);
    lines.push(`${harness}: ${change.file === null ? change.note : `${change.changed ? 'pointed at the proxy in' : 'already pointed at the proxy in'} ${change.file}`}`);
  }
  const written = await writeSnapshot({ ...(await controlPlaneSources(api)), root: resolve(flags.project), env }, snapshotPath(env));
  lines.push(`policy snapshot: ${written.changed ? 'written to' : 'unchanged in'} ${written.path}`);
  const gateHarnesses = harnesses.filter((h): h is GateHarness => (GATE_HARNESSES as readonly string[]).includes(h));
  const compiled = async () => ({ rules: codexRules(await loadSnapshot(snapshotPath(env), me.workspace.id)) });
  const gateFiles = gateTargets(home, gateHarnesses);
  const gateChanges = await rewriteGateHooks(gateFiles, 'install', { dryRun: false, codexRules: compiled });
  await recordManaged(env, gateFiles.filter((t) => gateChanges.some((c) => c.file === t.file && c.error === null)), 'install');
  for (const g of gateChanges) {
    lines.push(`${g.harness}: ${g.error ?? (g.changed ? `gate installed in ${g.file}` : `gate already in ${g.file}`)}`);
  }
  const mcpHarnesses = harnesses.filter((h): h is McpHarness => (MCP_HARNESSES as readonly string[]).includes(h));
  if (mcpHarnesses.length > 0) {
    for (const m of await rewriteMcpConfigs(mcpConfigTargets(home, resolve(flags.project), mcpHarnesses), 'install', { dryRun: false })) {
      if (m.error !== null) lines.push(`${m.harness} ${m.file}: left untouched: ${m.error}`);
      else if (m.changed.length > 0) lines.push(`${m.harness} ${m.file}: MCP servers ${m.changed.join(', ')} wrapped`);
    }
  }
  return { api, apiKey: key.apiKey };
}

export function registerInitCommand(program: Command, fail: (err: unknown) => never): void {
  program
    .command('init')
    .description('bring this machine under governance: join (--api-key) or create (--email) a workspace, point each harness found at the proxy, install the gates and wrap the MCP servers')
    .option('--api-key <key>', 'join the workspace of this key')
    .option('--email <address>', 'create a workspace (or sign in to yours) with this e-mail; the password on stdin')
    .option('--password-stdin', 'read the password from stdin', false)
    .option('--name <name>', 'your name, for a new account')
    .option('--workspace-name <name>', 'the new workspace\'s name')
    .option('--harness <names...>', `only these: ${INIT_HARNESSES.join(', ')} (default: those found)`)
    .option('--project <dir>', 'the project whose MCP configs are wrapped too', '.')
    .option('--proxy-url <url>', 'the proxy the harnesses are pointed at', PROXY_URL)
    .option('--control-plane-url <url>', `the control plane (SVC_CONTROL_PLANE_URL; default ${DEFAULT_CONTROL_PLANE_URL})`)
    .option('--dev', `the local control plane (${DEFAULT_CONTROL_PLANE_URL})`, false)
    .action(async (opts: Record<string, unknown>) => {
      const env = process.env;
      const parsed = initFlags.safeParse({
        ...opts,
        controlPlaneUrl: opts.dev === true ? DEFAULT_CONTROL_PLANE_URL : (opts.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || readStoredCredentials(env)?.controlPlaneUrl || DEFAULT_CONTROL_PLANE_URL)),
      });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const flags = parsed.data;
      const lines: string[] = [];
      try {
        await initMachine(flags, env, lines);
        process.stdout.write(`${lines.join('\n')}\n`);
      } catch (err) {
        process.stdout.write(lines.length > 0 ? `${lines.join('\n')}\n` : '');
        process.stderr.write(`svc init: ${err instanceof ConfigError ? err.message : err instanceof ControlPlaneHttpError ? err.message : `the control plane could not be reached: ${(err as Error).message}`}\n`);
        process.exit(1);
      }
    });
}
