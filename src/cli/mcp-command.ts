import type { Command } from 'commander';
import { z } from 'zod';
import { describeZodError } from '../config/runtime.js';
import { ConfigError } from '../lib/errors.js';
import { createLogger } from '../lib/logger.js';
import { svcHome } from '../lib/paths.js';
import { runWrap } from '../mcp/wrap.js';
import { startHttpProxy } from '../mcp/http-proxy.js';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { MCP_HARNESSES, mcpConfigTargets, rewriteMcpConfigs, type FileChange } from '../machine/mcp-install.js';

const valkeyUrl = z.url({ protocol: /^(redis|rediss|valkey|valkeys)$/ }).optional();

const wrapFlags = z.object({
  valkeyUrl,
  server: z.string().min(1).max(256),
  config: z.string().min(1).optional(),
  failBehavior: z.enum(['open', 'closed']),
});

const proxyFlags = z.object({
  valkeyUrl,
  server: z.string().min(1).max(256),
  url: z
    .string()
    .url()
    .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must be an http or https URL'),
  host: z.string().min(1).max(255),
  port: z.coerce.number().int().min(0).max(65535),
  transport: z.enum(['streamable-http', 'sse']),
  config: z.string().min(1).optional(),
  failBehavior: z.enum(['open', 'closed']),
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

/** `svc mcp …`: MCP governance. */
export function registerMcpCommands(program: Command, fail: (err: unknown) => never): void {
  const mcp = program.command('mcp').description('govern MCP servers: every tools/call is judged by the workspace settings');
  mcp
    .command('wrap')
    .description('run a stdio MCP server behind the governance proxy; a harness runs this in place of the server')
    .requiredOption('--server <name>', 'the server\'s name, as mcpAllowedServers and refusals name it')
    .option('--config <file>', 'JSON config file with the workspace settings (SVC_CONFIG); default: the last config synced from the control plane')
    .option('--fail <behavior>', 'open or closed: what happens to calls when no settings can be loaded (SVC_MCP_FAIL_BEHAVIOR, default open)')
    .option('--valkey-url <url>', 'Redis/Valkey where mcpBudgets are counted, shared by every wrapper and proxy using it (SVC_VALKEY_URL); default: this process alone')
    .argument('<command>', 'the MCP server\'s command')
    .argument('[args...]', 'its arguments (after --)')
    .action((command: string, args: string[], opts: Record<string, string | undefined>) => {
      const env = process.env;
      const parsed = wrapFlags.safeParse({
        server: opts.server,
        config: opts.config ?? (env.SVC_CONFIG || undefined),
        failBehavior: opts.fail ?? (env.SVC_MCP_FAIL_BEHAVIOR || 'open'),
        valkeyUrl: opts.valkeyUrl ?? (env.SVC_VALKEY_URL || undefined),
      });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      runWrap({
        server: parsed.data.server,
        command,
        args,
        configFile: parsed.data.config,
        home: svcHome(env),
        failBehavior: parsed.data.failBehavior,
        valkeyUrl: parsed.data.valkeyUrl,
        env,
        logger: createLogger(env.SVC_LOG_LEVEL ?? 'warn'),
      }).then((status) => process.exit(status), fail);
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
  mcp
    .command('proxy')
    .description('front a Streamable HTTP MCP server with the governance proxy; harnesses are given its URL instead of the server\'s')
    .requiredOption('--server <name>', 'the server\'s name, as mcpAllowedServers and refusals name it')
    .requiredOption('--url <upstream>', 'the real server\'s Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp')
    .option('--port <n>', 'port to listen on (default: a free one, printed)', '0')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--transport <kind>', 'streamable-http (serves /mcp) or sse, the older HTTP+SSE transport (serves /sse and /messages; --url is the server\'s SSE stream)', 'streamable-http')
    .option('--config <file>', 'JSON config file with the workspace settings (SVC_CONFIG); default: the last config synced from the control plane')
    .option('--fail <behavior>', 'open or closed: what happens to calls when no settings can be loaded (SVC_MCP_FAIL_BEHAVIOR, default open)')
    .option('--valkey-url <url>', 'Redis/Valkey where mcpBudgets are counted (SVC_VALKEY_URL); default: this process alone')
    .action((opts: Record<string, string | undefined>) => {
      const env = process.env;
      const parsed = proxyFlags.safeParse({
        server: opts.server,
        url: opts.url,
        host: opts.host,
        port: opts.port,
        transport: opts.transport,
        config: opts.config ?? (env.SVC_CONFIG || undefined),
        failBehavior: opts.fail ?? (env.SVC_MCP_FAIL_BEHAVIOR || 'open'),
        valkeyUrl: opts.valkeyUrl ?? (env.SVC_VALKEY_URL || undefined),
      });
      if (!parsed.success) fail(new ConfigError(`invalid option: ${describeZodError(parsed.error)}`));
      const { server, url, host, port, config, failBehavior, transport } = parsed.data;
      startHttpProxy({ server, upstream: new URL(url), transport, host, port, configFile: config, home: svcHome(env), failBehavior, valkeyUrl: parsed.data.valkeyUrl, env, logger: createLogger(env.SVC_LOG_LEVEL ?? 'warn') }).then((running) => {
        process.stdout.write(`svc mcp proxy: ${server} at ${running.url} -> ${url}\n`);
        for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void running.close().then(() => process.exit(0)));
      }, fail);
    });
}
