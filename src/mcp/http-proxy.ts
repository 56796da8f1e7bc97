import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { McpRelay } from './relay.js';
import { LocalSession } from './governed-session.js';
import { openCallTraces, openGovernance, type GovernanceOptions } from './governance-setup.js';

/** `streamable-http` (MCP 2025-03-26 and later) or the older HTTP+SSE transport. */
export type HttpTransport = 'streamable-http' | 'sse';

export interface HttpProxyOptions extends GovernanceOptions {
  /** The real server's endpoint: its Streamable HTTP one (e.g. http://127.0.0.1:3001/mcp), or its SSE stream (…/sse). */
  readonly upstream: URL;
  readonly transport: HttpTransport;
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
}

export interface RunningHttpProxy {
  /** The endpoint harnesses are given instead of the server's: `/mcp`, or `/sse` for the SSE transport. */
  readonly url: string;
  close(): Promise<void>;
}

/** The largest request body a harness may POST (tool arguments travel here; results come back the other way). */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** One harness session: its own session towards the real server, relayed under governance. */
interface Session<H extends Transport = StreamableHTTPServerTransport> {
  readonly harness: H;
  readonly upstream: Transport;
  readonly relay: McpRelay;
}

class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * `svc mcp proxy`: fronts a Streamable HTTP MCP server. Each harness session (its
 * `Mcp-Session-Id`, issued here) gets its own session with the real server, and every message
 * passes the same relay as `svc mcp wrap`: requests, responses, notifications and the server's
 * own requests, one message at a time. Binds a loopback address by default and refuses requests
 * whose Host header names anything else (DNS rebinding).
 */
export async function startHttpProxy(opts: HttpProxyOptions): Promise<RunningHttpProxy> {
  const { governance, close: closeGovernance } = await openGovernance(opts);
  const { sink, close: closeTraces } = await openCallTraces(opts);
  const sessions = new Map<string, Session>();
  let allowedHosts: string[] = [];

  const sseSessions = new Map<string, Session<SSEServerTransport>>();

  /** Relays a new harness session to a new upstream session of its own. */
  const relayed = async <H extends Transport>(harness: H, upstream: Transport, forget: () => void): Promise<Session<H>> => {
    const relay = new McpRelay({
      harness,
      server: upstream,
      policy: new LocalSession(governance),
      record: (trace) => sink.record(trace),
      logger: opts.logger,
      session: null,
      harnessName: opts.env.SVC_HARNESS || null,
    });
    harness.onclose = () => {
      forget();
      void upstream.close();
    };
    upstream.onerror = (err) => opts.logger.warn({ server: opts.server, err: err.message }, 'the MCP server could not be reached');
    upstream.onclose = () => void relay.serverClosed(`the MCP server '${opts.server}' closed the session`);
    harness.onerror = (err) => opts.logger.warn({ server: opts.server, err: err.message }, 'unreadable message from the harness');
    await upstream.start();
    await harness.start();
    return { harness, upstream, relay };
  };

  const openSession = async (): Promise<StreamableHTTPServerTransport> => {
    const harness: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, session),
      enableDnsRebindingProtection: true,
      allowedHosts,
    });
    const session = await relayed(harness, new StreamableHTTPClientTransport(opts.upstream), () => {
      if (harness.sessionId !== undefined) sessions.delete(harness.sessionId);
    });
    return harness;
  };

  /** The older transport: a GET opens the event stream (and the session), POSTs to /messages carry the harness's messages. */
  const handleSse = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    if (req.method === 'GET' && path === '/sse') {
      const harness = new SSEServerTransport('/messages', res, { enableDnsRebindingProtection: true, allowedHosts });
      const session = await relayed(harness, new SSEClientTransport(opts.upstream), () => sseSessions.delete(harness.sessionId));
      sseSessions.set(harness.sessionId, session);
      return;
    }
    if (req.method === 'POST' && path === '/messages') {
      const id = new URL(req.url ?? '/', 'http://x').searchParams.get('sessionId') ?? '';
      const session = sseSessions.get(id);
      if (session === undefined) throw new RequestError(404, -32001, 'Session not found');
      await session.harness.handlePostMessage(req, res, await readJson(req));
      return;
    }
    throw new RequestError(404, -32601, `svc mcp proxy (sse) serves GET /sse and POST /messages, not ${req.method ?? ''} ${path}`);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (opts.transport === 'sse') return handleSse(req, res, path);
    if (path !== '/mcp') throw new RequestError(404, -32601, `svc mcp proxy serves /mcp, not ${path}`);
    const header = req.headers['mcp-session-id'];
    const sessionId = typeof header === 'string' ? header : undefined;
    const body = req.method === 'POST' ? await readJson(req) : undefined;
    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      if (session === undefined) throw new RequestError(404, -32001, 'Session not found');
      await session.harness.handleRequest(req, res, body);
      return;
    }
    const initializes = Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);
    if (req.method !== 'POST' || !initializes) throw new RequestError(400, -32000, 'Bad Request: no valid session id, and not an initialize request');
    const harness = await openSession();
    await harness.handleRequest(req, res, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const known = err instanceof RequestError ? err : null;
      if (known === null) opts.logger.error({ server: opts.server, err }, 'an MCP request could not be handled');
      if (res.headersSent) {
        res.end();
        return;
      }
      res.writeHead(known?.status ?? 500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: known?.code ?? -32603, message: known?.message ?? 'internal error' }, id: null }));
    });
  });
  server.listen(opts.port, opts.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  allowedHosts = [`${opts.host}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`];
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;

  return {
    url: `http://${host}:${port}${opts.transport === 'sse' ? '/sse' : '/mcp'}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await Promise.all([...sessions.values(), ...sseSessions.values()].map((s) => s.harness.close()));
      await closed;
      await closeTraces();
      await closeGovernance();
    },
  };
}

/** The request body as JSON: 413 past the size bound, a JSON-RPC parse error when it is not JSON. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) throw new RequestError(413, -32600, `the request body is over ${MAX_REQUEST_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as JSONRPCMessage | JSONRPCMessage[];
  } catch {
    throw new RequestError(400, -32700, 'Parse error: the request body is not JSON');
  }
}
