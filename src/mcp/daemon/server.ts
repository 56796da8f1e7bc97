import { chmod, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { ControlPlaneApi } from '../../config/control-plane-api.js';
import { controlPlaneRegistry, governanceSettings, openStore, type GovernanceSources } from '../governance-setup.js';
import { McpGovernance, type GovernanceSettings } from '../governance.js';
import type { ServerRegistry } from '../registry-client.js';
import { McpSessionAnomalies } from '../session-anomalies.js';
import { loadMcpSettings } from '../settings-source.js';
import { daemonRequestSchema, readLines, type DaemonReply, type DaemonRequest } from './protocol.js';

export interface McpDaemonOptions extends GovernanceSources {
  readonly socket: string;
  /** How often the settings are read again (a synced config or an edited file takes effect within this). */
  readonly reloadMs: number;
  /** How often a status snapshot goes to the control plane (when there is one). */
  readonly reportIntervalMs: number;
}

export interface RunningMcpDaemon {
  readonly socket: string;
  close(): Promise<void>;
}

interface Counters {
  lookups: number;
  allowed: number;
  refused: number;
  errors: number;
}

interface ServerCounters {
  sessions: number;
  calls: number;
  refused: number;
}

/** One wrapper's connection: one harness session with one server. */
interface Connection {
  server: string | null;
  memberId: string | null;
  readonly anomalies: McpSessionAnomalies;
}

/** Refuses to start over a live daemon; clears a socket file a dead one left. */
async function claimSocket(path: string): Promise<void> {
  const live = await new Promise<boolean>((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new Error(`an MCP daemon already answers at ${path}`);
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

/**
 * `svc mcp daemon` (mcpProxyMode: daemon): one long-lived process per machine answers the policy
 * look-ups of every `svc mcp wrap` running in daemon mode, over a Unix socket only its user can
 * open. What that buys: the settings are read again every `reloadMs` (a wrapper reads them once),
 * mcpBudgets are counted in one place even without Redis, the registry's word is cached once per
 * server, and the control plane sees the machine's MCP traffic in one status report
 * (`POST /mcp-daemon/report`). The verdicts are the same `McpGovernance` a wrapper would compute.
 */
export async function startMcpDaemon(opts: McpDaemonOptions): Promise<RunningMcpDaemon> {
  let settings: GovernanceSettings = await governanceSettings(opts);
  let fingerprint = settings.ok ? settings.config.version : null;
  const store = await openStore(opts);
  const registries = new Map<string, ServerRegistry | undefined>();
  const governances = new Map<string, McpGovernance>();
  const counters: Counters = { lookups: 0, allowed: 0, refused: 0, errors: 0 };
  const perServer = new Map<string, ServerCounters>();
  const startedAt = new Date().toISOString();

  const registryOf = (server: string) => {
    if (!registries.has(server)) registries.set(server, controlPlaneRegistry(opts, server, settings.ok ? settings.config.mcpServers[server] : undefined));
    return registries.get(server);
  };
  const governanceOf = (server: string, memberId: string | null): McpGovernance => {
    const key = `${server}\u0000${memberId ?? ''}`;
    let governance = governances.get(key);
    if (governance === undefined) {
      const registry = registryOf(server);
      const env = { ...opts.env, SVC_MEMBER_ID: memberId ?? '' };
      governance = new McpGovernance(server, settings, env, store, registry === undefined ? {} : { registry });
      governances.set(key, governance);
    }
    return governance;
  };
  const countsOf = (server: string) => {
    let c = perServer.get(server);
    if (c === undefined) perServer.set(server, (c = { sessions: 0, calls: 0, refused: 0 }));
    return c;
  };

  const reload = async () => {
    const loaded = await loadMcpSettings({ configFile: opts.configFile, home: opts.home });
    const next = loaded.ok ? loaded.config.version : null;
    if (next === fingerprint || (!loaded.ok && !settings.ok)) return;
    settings = await governanceSettings(opts, loaded);
    fingerprint = next;
    governances.clear();
    opts.logger.info({ version: next }, 'MCP daemon: settings changed');
  };

  async function answer(connection: Connection, request: DaemonRequest): Promise<unknown> {
    if (request.op === 'hello') {
      connection.server = request.server;
      connection.memberId = request.memberId;
      countsOf(request.server).sessions++;
      return { workspaceId: governanceOf(request.server, request.memberId).workspaceId };
    }
    if (connection.server === null) throw new Error('say hello first');
    const governance = governanceOf(connection.server, connection.memberId);
    switch (request.op) {
      case 'judge': {
        counters.lookups++;
        const decision = await governance.judgeCall(request.tool, request.args, request.ctx, connection.anomalies);
        const server = countsOf(connection.server);
        server.calls++;
        if (decision.kind === 'refuse') {
          counters.refused++;
          server.refused++;
        } else counters.allowed++;
        return decision;
      }
      case 'answered':
        connection.anomalies.answered(request.callId, request.result);
        return undefined;
      case 'review':
        return governance.reviewResult(request.tool, request.result);
      case 'list':
        return governance.rewriteToolList(request.result);
      case 'observe':
        governance.observeTools(request.tools);
        return { observed: true };
    }
  }

  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const connection: Connection = { server: null, memberId: null, anomalies: new McpSessionAnomalies() };
    let queue: Promise<void> = Promise.resolve();
    const reply = (message: DaemonReply) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
    };
    readLines(
      socket,
      (line) => {
        queue = queue.then(async () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(line);
          } catch {
            return reply({ id: null, ok: false, error: 'not JSON' });
          }
          const request = daemonRequestSchema.safeParse(parsed);
          const id = typeof (parsed as { id?: unknown })?.id === 'number' ? (parsed as { id: number }).id : null;
          if (!request.success) return reply({ id, ok: false, error: `not a request: ${request.error.issues[0]?.message ?? 'invalid'}` });
          try {
            const value = await answer(connection, request.data);
            if ('id' in request.data) reply({ id: request.data.id, ok: true, value });
          } catch (err) {
            counters.errors++;
            opts.logger.warn({ err: (err as Error).message, op: request.data.op }, 'MCP daemon: a look-up failed');
            if ('id' in request.data) reply({ id: request.data.id, ok: false, error: (err as Error).message });
          }
        });
      },
      () => {
        reply({ id: null, ok: false, error: 'a message over the size limit' });
        socket.destroy();
      },
    );
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      sockets.delete(socket);
      if (connection.server !== null) countsOf(connection.server).sessions--;
    });
  });

  await claimSocket(opts.socket);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.socket, () => resolve());
  });
  await chmod(opts.socket, 0o600);

  const reloadTimer = setInterval(() => void reload().catch((err: unknown) => opts.logger.warn({ err }, 'MCP daemon: settings could not be read again')), opts.reloadMs);
  const api = opts.controlPlane === undefined ? undefined : new ControlPlaneApi({ controlPlaneUrl: opts.controlPlane.url, apiKey: opts.controlPlane.apiKey });
  const daemonId = opts.env.SVC_MCP_DAEMON_ID || hostname();
  const report = async () => {
    if (api === undefined) return;
    const servers = [...perServer.entries()].slice(0, 500).map(([name, c]) => ({ name, ...c }));
    await api.call('POST', '/mcp-daemon/report', { daemonId, startedAt, intervalMs: opts.reportIntervalMs, counters, servers }).catch((err: unknown) => {
      opts.logger.warn({ err: (err as Error).message }, 'MCP daemon: the status report could not be sent');
    });
  };
  void report();
  const reportTimer = setInterval(() => void report(), opts.reportIntervalMs);

  return {
    socket: opts.socket,
    async close() {
      clearInterval(reloadTimer);
      clearInterval(reportTimer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}
