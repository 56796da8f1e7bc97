import { join } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Logger } from '../lib/logger.js';
import { ControlPlaneApi } from '../config/control-plane-api.js';
import { createStore } from '../state/index.js';
import { TraceSink } from '../traces/sink.js';
import { ChildProcessTransport, type ChildExit } from './child-transport.js';
import { McpGovernance, type FailBehavior, type GovernanceSettings } from './governance.js';
import { ControlPlaneRegistry } from './registry-client.js';
import { LocalSession } from './governed-session.js';
import { McpRelay } from './relay.js';
import { mcpTraceShipper } from './trace-shipping.js';
import { loadMcpSettings } from './settings-source.js';

export interface GovernanceOptions {
  readonly server: string;
  readonly configFile: string | undefined;
  readonly home: string;
  /** What to do when no settings can be loaded (the settings' own mcpProxyFailBehavior cannot be read then). */
  readonly failBehavior: FailBehavior;
  readonly env: NodeJS.ProcessEnv;
  readonly logger: Logger;
  /** Redis/Valkey shared by every wrapper counting mcpBudgets; without it, each process counts alone. */
  readonly valkeyUrl: string | undefined;
  /** The control plane keeping the MCP server registry; without it, the registry is what the config says. */
  readonly controlPlane: { readonly url: string; readonly apiKey: string } | undefined;
}

export interface WrapOptions extends GovernanceOptions {
  readonly command: string;
  readonly args: readonly string[];
}

/** The server's governance from the settings (or their absence), the sink its call traces go to, and the store its budgets are counted in. */
export async function openGovernance(opts: GovernanceOptions): Promise<{ governance: McpGovernance; sink: TraceSink; close: () => Promise<void> }> {
  const loaded = await loadMcpSettings({ configFile: opts.configFile, home: opts.home });
  const settings: GovernanceSettings = loaded.ok ? { ok: true, config: loaded.config } : { ok: false, reason: loaded.reason, failBehavior: opts.failBehavior };
  if (!loaded.ok) opts.logger.warn({ server: opts.server, failBehavior: opts.failBehavior, reason: loaded.reason }, 'MCP settings could not be loaded');
  const store = createStore({ valkeyUrl: opts.valkeyUrl, logger: opts.logger });
  const synced = loaded.ok ? loaded.config.mcpServers[opts.server] : undefined;
  const registry =
    opts.controlPlane === undefined
      ? undefined
      : new ControlPlaneRegistry(
          opts.server,
          new ControlPlaneApi({ controlPlaneUrl: opts.controlPlane.url, apiKey: opts.controlPlane.apiKey }),
          opts.logger,
          synced,
          Number(opts.env.SVC_MCP_REGISTRY_REFRESH_MS) || undefined,
        );
  const governance = new McpGovernance(opts.server, settings, opts.env, store, registry === undefined ? {} : { registry });
  const shipper =
    opts.controlPlane === undefined
      ? undefined
      : await mcpTraceShipper({ home: opts.home, server: opts.server, controlPlaneUrl: opts.controlPlane.url, apiKey: opts.controlPlane.apiKey, logger: opts.logger });
  const sink = new TraceSink({ dir: join(opts.home, 'mcp-traces'), logger: opts.logger, ...(shipper === undefined ? {} : { forward: (trace) => shipper.enqueue(trace) }) });
  const close = async () => {
    await sink.close();
    await Promise.all([shipper?.close(), store.close()]);
  };
  return { governance, sink, close };
}

/** The exit status to leave with: the server's code, or 128 + its signal's number as a shell reports it. */
export function exitStatus(exit: ChildExit): number {
  if (exit.code !== null) return exit.code;
  const signals: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
  return 128 + (exit.signal === null ? 0 : (signals[exit.signal] ?? 0));
}

/**
 * `svc mcp wrap`: runs the MCP server as a child and stands between it and the harness on
 * stdio. Ends when either side does: the harness closing stdin ends the server's stdin (and
 * stops it if it lingers); the server exiting answers what it left unanswered and ends the
 * wrapper. Resolves with the status to exit with: the server's own.
 */
export async function runWrap(opts: WrapOptions): Promise<number> {
  const { governance, sink, close } = await openGovernance(opts);

  const child = new ChildProcessTransport({ command: opts.command, args: opts.args, env: opts.env });
  const harness = new StdioServerTransport();
  const relay = new McpRelay({
    harness,
    server: child,
    policy: new LocalSession(governance),
    record: (trace) => sink.record(trace),
    logger: opts.logger,
    session: opts.env.SVC_SESSION_ID || null,
    harnessName: opts.env.SVC_HARNESS || null,
  });
  child.onerror = (err) => opts.logger.warn({ server: opts.server, err: err.message }, 'unreadable output from the MCP server');
  harness.onerror = (err) => opts.logger.warn({ server: opts.server, err: err.message }, 'unreadable message from the harness');

  try {
    await child.start();
  } catch (err) {
    await close();
    process.stderr.write(`svc mcp wrap: cannot start the MCP server '${opts.server}' (${opts.command}): ${(err as Error).message}\n`);
    return 127;
  }
  await harness.start();
  // A harness that has gone leaves EPIPE on stdout: nothing more can reach it, and the server's exit still ends the wrapper.
  process.stdout.on('error', (err) => opts.logger.debug({ server: opts.server, err: err.message }, 'the harness is no longer reading'));

  let harnessClosed = false;
  // A signal to the wrapper is meant for the server: passed on, and its exit ends the wrapper.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => {
      harnessClosed = true;
      child.kill(signal);
    });
  }
  process.stdin.once('end', () => {
    harnessClosed = true;
    // Whatever the harness wrote before closing still reaches the server, then its stdin ends.
    void relay.drained().then(() => child.close());
  });

  const exit = await child.exited;
  if (!harnessClosed) {
    const how = exit.code !== null ? `exited with code ${exit.code}` : `was killed by ${exit.signal}`;
    process.stderr.write(`svc mcp wrap: the MCP server '${opts.server}' ${how}\n`);
    await relay.serverClosed(`the MCP server '${opts.server}' ${how}`);
  }
  await relay.drained();
  await close();
  return exitStatus(exit);
}
