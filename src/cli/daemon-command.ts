import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { describeZodError } from '../config/zod-error.js';
import { ConfigError } from '../lib/errors.js';
import { readStoredCredentials } from '../machine/credentials.js';
import { environmentFile, serviceFiles, type ServiceKind } from '../machine/service-unit.js';

const installFlags = z
  .object({
    workspaceId: z.string().min(1).max(128).optional(),
    apiKey: z.string().min(8).max(4096).optional(),
    controlPlaneUrl: z.url({ protocol: /^https?$/ }).optional(),
    binaryPath: z.string().min(1).max(4096).optional(),
    dryRun: z.boolean(),
    system: z.boolean(),
    mcp: z.boolean(),
    proxy: z.boolean(),
    port: z.coerce.number().int().min(1).max(65535).default(4000),
    valkeyUrl: z.url().optional(),
    upstreamUrl: z.url({ protocol: /^https?$/ }).optional(),
  })
  .refine((o) => !(o.mcp && o.proxy), { message: '--mcp and --proxy install different services: choose one' })
  .refine((o) => o.proxy || (o.workspaceId !== undefined && o.apiKey !== undefined), { message: 'install needs --workspace-id and --api-key (or svc login) unless --proxy', path: ['apiKey'] });

function systemctl(system: boolean, ...args: string[]): { ok: boolean; output: string } {
  const result = spawnSync('systemctl', [...(system ? [] : ['--user']), ...args], { encoding: 'utf8', timeout: 15_000 });
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() || (result.error?.message ?? '') };
}

const kindOf = (o: { mcp?: boolean; proxy?: boolean }): ServiceKind => (o.mcp ? 'mcp' : o.proxy ? 'proxy' : 'connect');

export function registerDaemonCommands(program: Command, fail: (err: unknown) => never): void {
  const daemon = program.command('daemon').description('run svc connect (or the MCP daemon, or the proxy) as a systemd service that restarts on any exit');
  daemon
    .command('install')
    .description('write the unit and its environment file, then enable and start it')
    .option('--workspace-id <id>', 'the workspace (default: svc login\'s)')
    .option('--api-key <key>', 'the key (default: svc login\'s)')
    .option('--control-plane-url <url>', 'the control plane (default: svc login\'s)')
    .option('--binary-path <path>', 'the svc executable to run (default: this one)')
    .option('--dry-run', 'print the unit and environment file, change nothing', false)
    .option('--system', 'a system-wide unit instead of the user\'s', false)
    .option('--mcp', 'the MCP daemon instead of the sync daemon', false)
    .option('--proxy', 'the proxy instead of the sync daemon', false)
    .option('--port <n>', 'the proxy\'s port', '4000')
    .option('--valkey-url <url>', 'the proxy\'s Redis/Valkey')
    .option('--upstream-url <url>', 'the proxy\'s upstream')
    .action(async (opts: Record<string, unknown>) => {
      const env = process.env;
      const stored = readStoredCredentials(env);
      const parsed = installFlags.safeParse({ ...opts, workspaceId: opts.workspaceId ?? stored?.workspaceId, apiKey: opts.apiKey ?? (env.SVC_API_KEY || stored?.apiKey), controlPlaneUrl: opts.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || stored?.controlPlaneUrl) });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const f = parsed.data;
      const home = env.HOME || homedir();
      const serviceEnv: Record<string, string> = {
        SVC_HOME: env.SVC_HOME || `${home}/.svc`,
        ...(f.controlPlaneUrl === undefined ? {} : { SVC_CONTROL_PLANE_URL: f.controlPlaneUrl }),
        ...(f.apiKey === undefined ? {} : { SVC_API_KEY: f.apiKey }),
        ...(f.workspaceId === undefined ? {} : { SVC_WORKSPACE_ID: f.workspaceId }),
      };
      const files = serviceFiles({ kind: kindOf(f), system: f.system, home, binaryPath: f.binaryPath, port: f.port, valkeyUrl: f.valkeyUrl, upstreamUrl: f.upstreamUrl }, serviceEnv);
      if (f.dryRun) {
        const masked = Object.fromEntries(Object.entries(serviceEnv).map(([k, v]) => [k, k === 'SVC_API_KEY' ? `${v.slice(0, 6)}…` : v]));
        process.stdout.write(`# ${files.unitPath}\n${files.unit}\n# ${files.envPath} (mode 0600)\n${environmentFile(masked)}`);
        return;
      }
      try {
        await mkdir(dirname(files.unitPath), { recursive: true });
        await writeFile(files.unitPath, files.unit);
        await mkdir(dirname(files.envPath), { recursive: true, mode: 0o700 });
        await writeFile(files.envPath, environmentFile(serviceEnv), { mode: 0o600 });
      } catch (err) {
        fail(err);
      }
      process.stdout.write(`wrote ${files.unitPath} and ${files.envPath}\n`);
      const reload = systemctl(f.system, 'daemon-reload');
      const enable = reload.ok ? systemctl(f.system, 'enable', '--now', `${files.name}.service`) : reload;
      if (enable.ok) process.stdout.write(`${files.name} enabled and started\n`);
      else {
        process.stderr.write(`svc daemon install: systemd did not take it (${enable.output}); run: systemctl ${f.system ? '' : '--user '}enable --now ${files.name}.service\n`);
        process.exitCode = 1;
      }
    });
  for (const action of ['uninstall', 'status', 'start', 'stop'] as const) {
    daemon
      .command(action)
      .description(action === 'uninstall' ? 'stop and disable the service and remove its unit' : `${action} the service`)
      .option('--system', 'the system-wide unit', false)
      .option('--mcp', 'the MCP daemon', false)
      .option('--proxy', 'the proxy', false)
      .action(async (opts: { system: boolean; mcp: boolean; proxy: boolean }) => {
        const home = process.env.HOME || homedir();
        const files = serviceFiles({ kind: kindOf(opts), system: opts.system, home, binaryPath: undefined, port: 4000, valkeyUrl: undefined, upstreamUrl: undefined }, {});
        const unit = `${files.name}.service`;
        const result = action === 'uninstall' ? systemctl(opts.system, 'disable', '--now', unit) : systemctl(opts.system, action, unit);
        if (action === 'uninstall') {
          await rm(files.unitPath, { force: true });
          await rm(files.envPath, { force: true });
          systemctl(opts.system, 'daemon-reload');
          process.stdout.write(`removed ${files.unitPath}\n`);
        }
        if (result.output !== '') process.stdout.write(`${result.output}\n`);
        if (!result.ok && action !== 'uninstall') process.exitCode = action === 'status' ? 3 : 1;
      });
  }
}
