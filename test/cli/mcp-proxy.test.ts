import t from 'tap';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI } from '../helpers/proxy.js';
import { EVERYTHING, mcpTraces, resultText, startChild, waitFor, writeSettings } from '../helpers/mcp.js';
import { freePort } from '../helpers/ports.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}


/** server-everything over Streamable HTTP (or SSE), `svc mcp proxy` in front of it, and the SDK client connected to the proxy. */
async function setup(t: Teardown, settings: Record<string, unknown>, transport: 'streamable-http' | 'sse' = 'streamable-http') {
  const port = await freePort();
  const sse = transport === 'sse';
  const upstream = await startChild(t, [EVERYTHING, sse ? 'sse' : 'streamableHttp'], { PORT: String(port) }, sse ? /running on port/ : /listening on port/);
  const home = mkdtempSync(join(tmpdir(), 'svc-mcp-proxy-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const proxy = await startChild(
    t,
    [CLI, 'mcp', 'proxy', '--server', 'everything', '--transport', transport, '--url', `http://127.0.0.1:${port}/${sse ? 'sse' : 'mcp'}`, '--config', writeSettings(home, settings)],
    { SVC_HOME: home, SVC_LOG_LEVEL: 'warn' },
    /svc mcp proxy: everything at (\S+) ->/,
  );
  const url = /svc mcp proxy: everything at (\S+) ->/.exec(proxy.output())![1]!;
  const client = new Client({ name: 'svc-test', version: '1.0.0' });
  await client.connect(sse ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url)));
  t.teardown(() => client.close());
  return { client, url, home, upstream: upstream.child };
}

t.test('svc mcp proxy over Streamable HTTP: tools/list with an override, an allowed call runs, a disallowed one is refused and traced', async (t) => {
  const { client, home } = await setup(t, { mcpAllowedTools: ['echo', 'trigger-long-running-operation'], mcpToolDescriptionOverrides: { echo: 'Repeats a message. Reviewed.' } });
  const { tools } = await client.listTools();
  t.equal(tools.find((x) => x.name === 'echo')?.description, 'Repeats a message. Reviewed.');
  const echoed = await client.callTool({ name: 'echo', arguments: { message: 'over http' } });
  t.equal(resultText(echoed), 'Echo: over http');
  const refused = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
  t.equal(refused.isError, true);
  t.match(resultText(refused), /^\[Svc Governance\] BLOCKED: TOOL_DISABLED: /);
  const traces = await waitFor('two call traces', () => (mcpTraces(home).length >= 2 ? mcpTraces(home) : undefined));
  t.match(traces, [
    { route: 'mcp:tools/call', mcp: { server: 'everything', tool: 'echo', verdict: 'allow' } },
    { enforcement: 'KILL', mcp: { tool: 'get-sum', verdict: 'block', code: 'TOOL_DISABLED' } },
  ]);
  t.notMatch(JSON.stringify(traces), /over http/, 'no argument value is traced');

  // Progress of a long call reaches the client while it runs, then its result.
  const progress: number[] = [];
  const long = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  });
  t.match(resultText(long), /completed/i);
  t.same(progress, [1, 2, 3], 'every progress notification arrived');

  const resources = await client.listResources();
  t.ok(resources.resources.length > 0, 'resources pass through');
});

t.test('requests the proxy does not serve get JSON-RPC errors; a forged Host is refused', async (t) => {
  const { url } = await setup(t, {});
  const post = (body: unknown, headers: Record<string, string> = {}, to = url) =>
    fetch(to, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(body) });
  const unknownSession = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-session-id': 'no-such-session' });
  t.equal(unknownSession.status, 404);
  t.match(await unknownSession.json(), { jsonrpc: '2.0', error: { code: -32001 } });
  const noSession = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  t.equal(noSession.status, 400);
  const notJson = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
  t.equal(notJson.status, 400);
  t.match(await notJson.json(), { error: { code: -32700 } });
  const elsewhere = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {}, url.replace('/mcp', '/other'));
  t.equal(elsewhere.status, 404);
  const huge = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(5 * 1024 * 1024) });
  t.equal(huge.status, 413);
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
  // fetch will not send a Host of its own choosing; node:http will, as a rebinding page's browser would.
  const rebinding = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(JSON.stringify(initialize));
  });
  t.equal(rebinding, 403, 'a Host header naming another site is refused');
});

t.test('the real server going away: calls are answered with an error, never left waiting', async (t) => {
  const { client, upstream } = await setup(t, {});
  t.equal(resultText(await client.callTool({ name: 'echo', arguments: { message: 'before' } })), 'Echo: before');
  const gone = once(upstream, 'exit');
  upstream.kill('SIGKILL');
  await gone;
  const after = await client.callTool({ name: 'echo', arguments: { message: 'after' } }).then(
    (result) => ({ result }),
    (error: Error) => ({ error }),
  );
  t.ok('error' in after || after.result.isError === true, 'the call fails instead of hanging');
  if ('error' in after) t.match(after.error.message, /could not be reached|closed/);
});

t.test('svc mcp proxy --transport sse: the older HTTP+SSE transport, the same governance', async (t) => {
  const { client, home, url } = await setup(t, { mcpAllowedTools: ['echo'] }, 'sse');
  t.match(url, /\/sse$/);
  t.ok((await client.listTools()).tools.length > 5, 'tools listed');
  t.equal(resultText(await client.callTool({ name: 'echo', arguments: { message: 'over sse' } })), 'Echo: over sse');
  const refused = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
  t.match(resultText(refused), /^\[Svc Governance\] BLOCKED: TOOL_DISABLED: /);
  const traces = await waitFor('two call traces', () => (mcpTraces(home).length >= 2 ? mcpTraces(home) : undefined));
  t.match(traces.map((tr) => tr.mcp.verdict), ['allow', 'block']);
  const unknown = await fetch(url.replace('/sse', '/messages?sessionId=nope'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(unknown.status, 404, 'a message for an unknown session');
});
