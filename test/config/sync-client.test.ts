import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LastGoodConfig } from '../../src/config/last-good.js';
import { hashKey } from '../../src/config/runtime.js';
import { ConfigSyncClient } from '../../src/config/sync-client.js';
import type { ConfigAck, GatewayConfigDocument } from '../../src/config/sync-document.js';
import { createLogger } from '../../src/lib/logger.js';

/**
 * A control plane that serves one gateway's config over HTTP but has no WebSocket, so only the
 * poll and the heartbeat can bring a change.
 */
async function controlPlaneWithoutPush(t: Tap.Test) {
  const state = { version: 1, valid: true, full: 0, notModified: 0, acks: [] as ConfigAck[] };
  const doc = () => ({
    gatewayId: 'gw_1',
    workspaceId: 'ws_1',
    version: state.version,
    config: { keys: [{ sha256: hashKey('vk_key_for_tests') }], providers: {}, settings: state.valid ? { allowedModels: [`m${state.version}`] } : { allowedModels: 'broken' }, budget: {}, byokRequired: false },
  });
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const etag = `"v${state.version}"`;
      if (req.url?.endsWith('/config')) {
        if (req.headers['if-none-match'] === etag) {
          state.notModified++;
          return res.writeHead(304, { etag }).end();
        }
        state.full++;
        return res.writeHead(200, { etag, 'content-type': 'application/json' }).end(JSON.stringify(doc()));
      }
      if (req.url?.endsWith('/config-ack')) state.acks.push(JSON.parse(body));
      if (req.url?.endsWith('/heartbeat')) return res.writeHead(200).end(JSON.stringify({ ok: true, configVersion: state.version }));
      res.writeHead(req.url?.includes('/sync/ws') ? 404 : 200).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, state };
}

async function client(t: Tap.Test, url: string, intervals: { pollIntervalMs: number; heartbeatIntervalMs: number }) {
  const dir = await mkdtemp(join(tmpdir(), 'svc-sync-client-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const applied: GatewayConfigDocument[] = [];
  const sync = new ConfigSyncClient({
    controlPlaneUrl: url,
    apiKey: 'vk_key_for_tests',
    gatewayId: 'gw_1',
    lastGood: new LastGoodConfig(join(dir, 'last-good.json')),
    ...intervals,
    apply: (d) => applied.push(d),
    heartbeat: () => ({ inflight: 0 }),
    logger: createLogger('silent'),
  });
  t.teardown(() => sync.close());
  return { sync, applied };
}

async function until(what: string, probe: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('without push, the poll picks a change up; unchanged polls are 304s; an invalid document is rejected and the current one kept', async (t) => {
  const cp = await controlPlaneWithoutPush(t);
  const { sync, applied } = await client(t, cp.url, { pollIntervalMs: 100, heartbeatIntervalMs: 600_000 });
  t.equal(await sync.start(), 'control-plane');
  t.same(applied.map((d) => d.version), [1]);
  await until('a conditional poll', () => cp.state.notModified >= 2);
  t.equal(cp.state.full, 1, 'an unchanged config is not sent again');
  cp.state.version = 2;
  await until('version 2 applied', () => sync.version === 2);
  t.same(applied.at(-1)?.config.settings, { allowedModels: ['m2'] });
  await until('the ack', () => cp.state.acks.some((a) => a.version === 2));
  t.same(cp.state.acks, [{ version: 1, status: 'applied' }, { version: 2, status: 'applied' }]);
  cp.state.version = 3;
  cp.state.valid = false;
  await until('the rejection', () => cp.state.acks.some((a) => a.version === 3));
  t.match(cp.state.acks.at(-1), { version: 3, status: 'rejected', reason: /config\.settings\.allowedModels/ });
  t.equal(sync.version, 2, 'the current config stays');
  t.equal(applied.length, 2);
  const fullBefore = cp.state.full;
  await until('more polls', () => cp.state.notModified >= 6);
  t.equal(cp.state.full, fullBefore, 'a rejected document is not fetched again until it changes');
});

t.test('a heartbeat that reports a version the proxy does not serve triggers a pull', async (t) => {
  const cp = await controlPlaneWithoutPush(t);
  const { sync } = await client(t, cp.url, { pollIntervalMs: 600_000, heartbeatIntervalMs: 100 });
  await sync.start();
  cp.state.version = 5;
  await until('version 5 applied', () => sync.version === 5);
  t.pass('applied through the heartbeat');
});

t.test('a 4xx from the control plane at start is fatal, not a reason to fall back', async (t) => {
  const server = createServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"UNAUTHORIZED"}}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  const { sync } = await client(t, `http://127.0.0.1:${(server.address() as { port: number }).port}`, { pollIntervalMs: 600_000, heartbeatIntervalMs: 600_000 });
  await t.rejects(sync.start(), /control plane answered 401/);
});
