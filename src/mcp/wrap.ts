import { ChildProcessTransport } from './child-transport.js';
import type { GovernanceOptions } from './governance-setup.js';

export interface WrapOptions extends GovernanceOptions {
  readonly command: string;
  readonly args: readonly string[];
}

/** The wrapped server, and whether its end was asked for (a signal, the harness closing stdin) rather than its own doing. */
export interface WrappedServer {
  readonly child: ChildProcessTransport;
  stopAsked: boolean;
}

/**
 * `svc mcp wrap`: runs the MCP server as a child and stands between it and the harness on stdio.
 * The server starts first, before the policy and the relay are loaded, so its own start-up runs
 * beside theirs instead of after. Resolves with the status to exit with: the server's own.
 */
export async function runWrap(opts: WrapOptions): Promise<number> {
  const child = new ChildProcessTransport({ command: opts.command, args: opts.args, env: opts.env });
  child.onerror = (err) => opts.logger.warn({ server: opts.server, err: err.message }, 'unreadable output from the MCP server');
  try {
    await child.start();
  } catch (err) {
    process.stderr.write(`svc mcp wrap: cannot start the MCP server '${opts.server}' (${opts.command}): ${(err as Error).message}\n`);
    return 127;
  }
  const server: WrappedServer = { child, stopAsked: false };
  // A signal to the wrapper is meant for the server: passed on, and its exit ends the wrapper.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => {
      server.stopAsked = true;
      child.kill(signal);
    });
  }
  let session: typeof import('./wrap-session.js');
  try {
    session = await import('./wrap-session.js');
  } catch (err) {
    await child.close();
    throw err;
  }
  return session.relayWrappedServer(opts, server);
}
