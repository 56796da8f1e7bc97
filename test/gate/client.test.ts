import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import t from 'tap';
import { GateClient } from '../../src/gate/client.js';

/** A port nothing listens on: one a server held and gave back. */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

t.test('a control plane that cannot be reached is named with the socket\'s reason', async (t) => {
  const client = new GateClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, apiKey: 'vk_test', timeoutMs: 30_000 });
  t.match(await client.hookGate('Bash', { command: 'ls' }), { kind: 'unavailable', reason: /^the control plane could not be reached: connect ECONNREFUSED 127\.0\.0\.1:\d+$/ });
});

t.test('a control plane that never answers is given up at the client\'s timeout', async (t) => {
  // Accepts the connection and says nothing.
  const sockets: import('node:net').Socket[] = [];
  const silent = createServer((s) => sockets.push(s)).listen(0, '127.0.0.1');
  await once(silent, 'listening');
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const client = new GateClient({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, apiKey: 'vk_test', timeoutMs: 200 });
  t.match(await client.hookGate('Bash', { command: 'ls' }), { kind: 'unavailable', reason: 'the control plane could not be reached: no answer within 200 ms' });
});

t.test('a redirect is not followed: the key stays with the control plane it was given for', async (t) => {
  const http = await import('node:http');
  const seen: string[] = [];
  const elsewhere = http.createServer((req, res) => {
    seen.push(req.headers.authorization ?? '');
    res.end('{"verdict":"allow"}');
  });
  elsewhere.listen(0, '127.0.0.1');
  await once(elsewhere, 'listening');
  const target = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/api/v1/hook-gate`;
  const redirecting = http.createServer((_req, res) => {
    res.writeHead(307, { location: target });
    res.end();
  });
  redirecting.listen(0, '127.0.0.1');
  await once(redirecting, 'listening');
  t.teardown(() => {
    elsewhere.close();
    redirecting.close();
  });
  const client = new GateClient({ baseUrl: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`, apiKey: 'vk_test', timeoutMs: 30_000 });
  t.match(await client.hookGate('Bash', { command: 'ls' }), { kind: 'unavailable', reason: 'the hook gate answered 307 without a verdict' });
  t.same(seen, [], 'nothing reached the other server');
});
