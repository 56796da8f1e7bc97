import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ChildExit } from './child-transport.js';
import { openCallTraces, openGovernance, type GovernanceOptions } from './governance-setup.js';
import { DaemonSession } from './daemon/client.js';
import { daemonSocketPath } from './daemon/protocol.js';
import { LocalSession, type GovernedSession } from './governed-session.js';
import { McpRelay } from './relay.js';
import type { WrappedServer } from './wrap.js';

/**
 * The session's policy: the machine's MCP daemon when `SVC_MCP_PROXY_MODE` is `daemon` and one
 * answers at its socket, else (and whenever the daemon stops answering) this process's own.
 */
async function governedSession(opts: GovernanceOptions): Promise<{ policy: GovernedSession; close: () => Promise<void> }> {
  let local: ReturnType<typeof openGovernance> | undefined;
  const localSession = async () => new LocalSession((await (local ??= openGovernance(opts))).governance);
  const closeLocal = async () => {
    if (local !== undefined) await (await local).close();
  };
  if (opts.env.SVC_MCP_PROXY_MODE === 'daemon') {
    const path = daemonSocketPath(opts.env, opts.home);
    const daemon = await DaemonSession.connect({ path, server: opts.server, memberId: opts.env.SVC_MEMBER_ID || null, fallback: localSession, logger: opts.logger });
    if (daemon !== null) {
      return {
        policy: daemon,
        close: async () => {
          daemon.close();
          await closeLocal();
        },
      };
    }
    opts.logger.warn({ server: opts.server, socket: path }, 'SVC_MCP_PROXY_MODE is daemon but no MCP daemon answers: governing in this process');
  }
  return { policy: await localSession(), close: closeLocal };
}

/** The exit status to leave with: the server's code, or 128 + its signal's number as a shell reports it. */
export function exitStatus(exit: ChildExit): number {
  if (exit.code !== null) return exit.code;
  const signals: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
  return 128 + (exit.signal === null ? 0 : (signals[exit.signal] ?? 0));
}

/**
 * Stands between the harness on stdio and the started MCP server, under the policy. Ends
 * when either side does: the harness closing stdin ends the server's stdin (and stops it if it
 * lingers); the server exiting answers what it left unanswered and ends the wrapper. Resolves
 * with the status to exit with: the server's own.
 */
export async function relayWrappedServer(opts: GovernanceOptions, server: WrappedServer): Promise<number> {
  const { child } = server;
  let governance: { policy: GovernedSession; close: () => Promise<void> };
  let traces: Awaited<ReturnType<typeof openCallTraces>>;
  try {
    governance = await governedSession(opts);
    traces = await openCallTraces(opts);
  } catch (err) {
    await child.close();
    throw err;
  }
  const { policy } = governance;
  const { sink } = traces;
  const close = async () => {
    await traces.close();
    await governance.close();
  };

  const harness = new StdioServerTransport();
  const relay = new McpRelay({
    harness,
    server: child,
    policy,
    record: (trace) => sink.record(trace),
    logger: opts.logger,
    session: opts.env.SVC_SESSION_ID || null,
    harnessName: opts.env.SVC_HARNESS || null,
  });
  harness.onerror = (err) => opts.logger.warn({ server: opts.server, err: err.message }, 'unreadable message from the harness');

  await harness.start();
  // A harness that has gone leaves EPIPE on stdout: nothing more can reach it, and the server's exit still ends the wrapper.
  process.stdout.on('error', (err) => opts.logger.debug({ server: opts.server, err: err.message }, 'the harness is no longer reading'));

  process.stdin.once('end', () => {
    server.stopAsked = true;
    // Whatever the harness wrote before closing still reaches the server, then its stdin ends.
    void relay.drained().then(() => child.close());
  });

  const exit = await child.exited;
  if (!server.stopAsked) {
    const how = exit.code !== null ? `exited with code ${exit.code}` : `was killed by ${exit.signal}`;
    process.stderr.write(`svc mcp wrap: the MCP server '${opts.server}' ${how}\n`);
    await relay.serverClosed(`the MCP server '${opts.server}' ${how}`);
  }
  await relay.drained();
  await close();
  return exitStatus(exit);
}
