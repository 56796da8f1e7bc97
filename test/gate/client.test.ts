import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
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

t.test('an answer past the size bound is not read', async (t) => {
  const http = await import('node:http');
  const huge = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const more = () => {
      while (res.write(chunk));
    };
    res.on('drain', more);
    res.on('close', () => res.off('drain', more));
    more();
  });
  huge.listen(0, '127.0.0.1');
  await once(huge, 'listening');
  t.teardown(() => huge.close());
  const client = new GateClient({ baseUrl: `http://127.0.0.1:${(huge.address() as AddressInfo).port}`, apiKey: 'vk_test', timeoutMs: 30_000 });
  t.match(await client.hookGate('Bash', { command: 'ls' }), { kind: 'unavailable', reason: /the answer is larger than 4194304 bytes$/ });
});

t.test('an https control plane is spoken to over TLS, and one whose certificate is not trusted gets no request', async (t) => {
  const dir = t.testdir();
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1']);
  const https = await import('node:https');
  let requests = 0;
  const server = https.createServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) => {
    requests++;
    res.end('{"verdict":"allow"}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const client = new GateClient({ baseUrl: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'vk_test', timeoutMs: 30_000 });
  t.match(await client.hookGate('Bash', { command: 'ls' }), { kind: 'unavailable', reason: /self-signed certificate/ });
  t.equal(requests, 0, 'the key never left');
});

t.test('an answer cut short is a failure, at once, not a wait for the timeout', async (t) => {
  const http = await import('node:http');
  const cutting = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
    res.write('{"verd', () => req.socket.destroy());
  });
  cutting.listen(0, '127.0.0.1');
  await once(cutting, 'listening');
  t.teardown(() => cutting.close());
  // The timeout is the test's own: it would only be reached if the cut went unnoticed.
  const client = new GateClient({ baseUrl: `http://127.0.0.1:${(cutting.address() as AddressInfo).port}`, apiKey: 'vk_test', timeoutMs: 120_000 });
  t.match(await client.hookGate('Bash', { command: 'ls' }), { kind: 'unavailable', reason: 'the control plane could not be reached: the connection closed before the answer was complete' });
});
