import type { Command } from 'commander';
import { z } from 'zod';
import { describeZodError } from '../config/zod-error.js';
import { ConfigError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { svcHome } from '../lib/paths.js';
import type { GovernanceOptions, GovernanceSources } from '../mcp/governance-setup.js';
import { daemonSocketPath } from '../mcp/daemon/protocol.js';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { MCP_HARNESSES, mcpConfigTargets, rewriteMcpConfigs, type FileChange } from '../machine/mcp-install.js';

/** Where governance comes from: what `wrap`, `proxy` and `daemon` all take. */
const sourceFlags = z.object({
  config: z.string().min(1).optional(),
  failBehavior: z.enum(['open', 'closed']),
  valkeyUrl: z.url({ protocol: /^(redis|rediss|valkey|valkeys)$/ }).optional(),
  controlPlaneUrl: z.url({ protocol: /^https?$/ }).optional(),
  apiKey: z.string().regex(/^vk_[A-Za-z0-9_-]{8,200}$/, 'the API key is a vk_ key').optional(),
});
const needsKey = <T extends { controlPlaneUrl?: string | undefined; apiKey?: string | undefined }>(o: T) => o.controlPlaneUrl === undefined || o.apiKey !== undefined;
const keyMessage = { message: '--control-plane-url needs --api-key (SVC_API_KEY)', path: ['apiKey'] };

/** `wrap` and `proxy`: the server's name too. */
const governanceFlags = sourceFlags.extend({ server: z.string().min(1).max(256) }).refine(needsKey, keyMessage);
type GovernanceFlags = z.infer<typeof governanceFlags>;

const daemonFlags = sourceFlags
  .extend({
    socket: z.string().min(1).max(100),
    reloadMs: z.coerce.number().int().min(100).max(3_600_000),
    reportIntervalMs: z.coerce.number().int().min(1000).max(3_600_000),
  })
  .refine(needsKey, keyMessage);

/** The flags every MCP command takes, with their environment fallbacks. */
function withSourceOptions(command: Command): Command {
  return command
    .option('--config <file>', 'JSON config file with the workspace settings (SVC_CONFIG); default: the last config synced from the control plane')
    .option('--fail <behavior>', 'open or closed: what happens to calls when no settings can be loaded (SVC_MCP_FAIL_BEHAVIOR, default open)')
    .option('--valkey-url <url>', 'Redis/Valkey where mcpBudgets are counted, shared by every wrapper and proxy using it (SVC_VALKEY_URL); default: this process alone')
    .option('--control-plane-url <url>', 'the control plane keeping the MCP server registry and receiving call traces (SVC_CONTROL_PLANE_URL)')
    .option('--api-key <vk_key>', 'the workspace key used with the control plane (SVC_API_KEY)');
}

/** `wrap` and `proxy`: the flags of every MCP command and the server's name. */
function withGovernanceOptions(command: Command): Command {
  return withSourceOptions(command).requiredOption('--server <name>', 'the server\'s name, as mcpAllowedServers and refusals name it');
}

function governanceInput(opts: Record<string, string | undefined>, env: NodeJS.ProcessEnv): Record<keyof GovernanceFlags, string | undefined> {
  return { server: opts.server, ...sourceInput(opts, env) };
}

function sourceInput(opts: Record<string, string | undefined>, env: NodeJS.ProcessEnv): Record<keyof z.infer<typeof sourceFlags>, string | undefined> {
  return {
    config: opts.config ?? (env.SVC_CONFIG || undefined),
    failBehavior: opts.fail ?? (env.SVC_MCP_FAIL_BEHAVIOR || 'open'),
    valkeyUrl: opts.valkeyUrl ?? (env.SVC_VALKEY_URL || undefined),
    controlPlaneUrl: opts.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || undefined),
    apiKey: opts.apiKey ?? (env.SVC_API_KEY || undefined),
  };
}

function governanceOptions(flags: GovernanceFlags, env: NodeJS.ProcessEnv): GovernanceOptions {
  return { server: flags.server, ...sourceOptions(flags, env) };
}

function sourceOptions(flags: z.infer<typeof sourceFlags>, env: NodeJS.ProcessEnv): GovernanceSources {
  return {
    configFile: flags.config,
    home: svcHome(env),
    failBehavior: flags.failBehavior,
    valkeyUrl: flags.valkeyUrl,
    controlPlane: flags.controlPlaneUrl === undefined ? undefined : { url: flags.controlPlaneUrl, apiKey: flags.apiKey! },
    env,
    logger: createLogger(env.SVC_LOG_LEVEL ?? 'warn'),
  };
}

const proxyFlags = z.object({
  url: z
    .string()
    .url()
    .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must be an http or https URL'),
  host: z.string().min(1).max(255),
  port: z.coerce.number().int().min(0).max(65535),
  transport: z.enum(['streamable-http', 'sse']),
});

const installFlags = z.object({
  harness: z.array(z.enum(MCP_HARNESSES)).min(1),
  project: z.string().min(1),
  dryRun: z.boolean(),
});

function report(changes: readonly FileChange[], mode: 'install' | 'uninstall', dryRun: boolean): string {
  const verb = mode === 'install' ? (dryRun ? 'would wrap' : 'wrapped') : dryRun ? 'would restore' : 'restored';
  const lines = changes.map((c) => {
    const parts = [`${c.harness} ${c.file}:`];
    if (c.error !== null) parts.push(`left untouched: ${c.error}`);
    if (c.changed.length > 0) parts.push(`${verb} ${c.changed.join(', ')}${c.backup !== null && mode === 'install' && !dryRun ? ` (original kept in ${c.backup})` : ''}`);
    if (c.overHttp.length > 0) parts.push(`left ${c.overHttp.join(', ')} (served over HTTP: front it with svc mcp proxy)`);
    if (c.unknown.length > 0) parts.push(`left ${c.unknown.join(', ')} (no command to wrap)`);
    return parts.join(' ');
  });
  return `${lines.length > 0 ? lines.join('\n') : `no MCP server entries to ${mode === 'install' ? 'wrap' : 'restore'}`}\n`;
}

/** `svc mcp …`: MCP governance. Each command loads its own modules when it runs (a wrapper starts its server first). */
export function registerMcpCommands(program: Command, fail: (err: unknown) => never): void {
  const mcp = program.command('mcp').description('govern MCP servers: every tools/call is judged by the workspace settings');
  withGovernanceOptions(mcp.command('wrap').description('run a stdio MCP server behind the governance proxy; a harness runs this in place of the server'))
    .argument('<command>', 'the MCP server\'s command')
    .argument('[args...]', 'its arguments (after --)')
    .action((command: string, args: string[], opts: Record<string, string | undefined>) => {
      const env = process.env;
      const parsed = governanceFlags.safeParse(governanceInput(opts, env));
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      import('../mcp/wrap.js')
        .then(({ runWrap }) => runWrap({ ...governanceOptions(parsed.data, env), command, args }))
        .then((status) => process.exit(status), fail);
    });
  for (const mode of ['install', 'uninstall'] as const) {
    mcp
      .command(mode)
      .description(
        mode === 'install'
          ? 'rewrite the stdio MCP servers of Claude Code, Cursor and Gemini CLI configs to run through svc mcp wrap (a backup of each file is kept; running it again changes nothing)'
          : 'put back the MCP server entries svc mcp install wrapped (the backup itself when nothing else changed)',
      )
      .option('--harness <names...>', `only these: ${MCP_HARNESSES.join(', ')}`, [...MCP_HARNESSES])
      .option('--project <dir>', 'the project whose .mcp.json, .cursor/ and .gemini/ configs are rewritten too', '.')
      .option('--dry-run', 'say what would change, change nothing', false)
      .action(async (opts: { harness: string[]; project: string; dryRun: boolean }) => {
        const parsed = installFlags.safeParse(opts);
        if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
        try {
          const targets = mcpConfigTargets(homedir(), resolve(parsed.data.project), parsed.data.harness);
          const changes = await rewriteMcpConfigs(targets, mode, { dryRun: parsed.data.dryRun });
          process.stdout.write(report(changes, mode, parsed.data.dryRun));
          if (changes.some((c) => c.error !== null)) process.exitCode = 1;
        } catch (err) {
          fail(err);
        }
      });
  }
  withGovernanceOptions(mcp.command('proxy').description('front a Streamable HTTP MCP server with the governance proxy; harnesses are given its URL instead of the server\'s'))
    .requiredOption('--url <upstream>', 'the real server\'s Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp')
    .option('--port <n>', 'port to listen on (default: a free one, printed)', '0')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--transport <kind>', 'streamable-http (serves /mcp) or sse, the older HTTP+SSE transport (serves /sse and /messages; --url is the server\'s SSE stream)', 'streamable-http')
    .action((opts: Record<string, string | undefined>) => {
      const env = process.env;
      const governance = governanceFlags.safeParse(governanceInput(opts, env));
      if (!governance.success) fail(new ConfigError(`invalid option: ${describeZodError(governance.error)}`));
      const parsed = proxyFlags.safeParse({ url: opts.url, host: opts.host, port: opts.port, transport: opts.transport });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const { url, host, port, transport } = parsed.data;
      const server = governance.data.server;
      import('../mcp/http-proxy.js')
        .then(({ startHttpProxy }) => startHttpProxy({ ...governanceOptions(governance.data, env), upstream: new URL(url), transport, host, port }))
        .then((running) => {
          process.stdout.write(`svc mcp proxy: ${server} at ${running.url} -> ${url}\n`);
          for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void running.close().then(() => process.exit(0)));
        }, fail);
    });
  withSourceOptions(
    mcp
      .command('daemon')
      .description('answer the MCP policy look-ups of every svc mcp wrap on this machine running with SVC_MCP_PROXY_MODE=daemon (mcpProxyMode: daemon), over a Unix socket'),
  )
    .option('--socket <path>', 'the socket to listen on (SVC_MCP_DAEMON_SOCKET; default $SVC_HOME/mcp-daemon.sock)')
    .option('--reload-ms <n>', 'how often the settings are read again', '5000')
    .option('--report-interval-ms <n>', 'how often a status snapshot goes to the control plane', '30000')
    .action((opts: Record<string, string | undefined>) => {
      const env = process.env;
      const parsed = daemonFlags.safeParse({ ...sourceInput(opts, env), socket: opts.socket ?? daemonSocketPath(env, svcHome(env)), reloadMs: opts.reloadMs, reportIntervalMs: opts.reportIntervalMs });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const { socket, reloadMs, reportIntervalMs } = parsed.data;
      import('../mcp/daemon/server.js')
        .then(({ startMcpDaemon }) => startMcpDaemon({ ...sourceOptions(parsed.data, env), socket, reloadMs, reportIntervalMs }))
        .then((running) => {
          process.stdout.write(`svc mcp daemon: listening at ${running.socket}\n`);
          for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void running.close().then(() => process.exit(0)));
        }, fail);
    });
}
