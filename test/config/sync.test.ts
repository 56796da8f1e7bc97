import t from 'tap';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { api, signUp, startTestControlPlane, type Account, type TestControlPlane } from '../helpers/controlplane.js';
import { SwitchableLink } from '../helpers/link.js';
import { spawnProxy, type SpawnedProxy } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

async function tempHome(t: Tap.Test): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'svc-proxy-home-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  return home;
}

async function setup(t: Tap.Test) {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const gateway = await api(cp, 'POST', '/gateways', { token: owner.accessToken, body: { name: 'edge-1' } });
  t.equal(gateway.status, 201);
  return { mock, cp, owner, gatewayId: gateway.body.id as string };
}

function proxyArgs(cp: { url: string }, owner: Account, gatewayId: string, upstreamUrl: string) {
  return ['--threads', '1', '--control-plane-url', cp.url, '--api-key', owner.apiKey, '--gateway-id', gatewayId, '--upstream-url', upstreamUrl];
}

function proxyEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // The poll is a minute away: only the pushed announcement can make a change show within a second.
  return { SVC_HOME: home, SVC_SYNC_POLL_MS: '60000', SVC_SYNC_HEARTBEAT_MS: '200', SVC_TRACE_SHIP_MS: '100', ...extra };
}

async function chat(proxy: SpawnedProxy, key: string, model: string, content = 'hello') {
  const res = await request(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  const body = (await res.body.json()) as { error?: { code?: string } };
  return { status: res.statusCode, code: body.error?.code };
}

async function gatewayStatus(cp: TestControlPlane, owner: Account, gatewayId: string) {
  return (await api(cp, 'GET', `/gateways/${gatewayId}/status`, { token: owner.accessToken })).body;
}

t.test('push: a settings PUT changes a running proxy within 1 s and the gateway acks it applied', async (t) => {
  const { mock, cp, owner, gatewayId } = await setup(t);
  const home = await tempHome(t);
  const proxy = await spawnProxy(t, proxyArgs(cp, owner, gatewayId, mock.url), proxyEnv(home));
  t.match(proxy.readyLine, new RegExp(`control plane .* as ${gatewayId}`));
  t.equal((await chat(proxy, owner.apiKey, 'gpt-4o-mini')).status, 200, 'the workspace key synced from the control plane is accepted');
  t.equal((await chat(proxy, 'vk_not_a_workspace_key', 'gpt-4o-mini')).status, 401);

  const put = await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { allowedModels: ['gpt-4o'] } });
  t.equal(put.status, 200);
  const written = Date.now();
  const refusal = await until('the proxy to refuse gpt-4o-mini', async () => {
    const r = await chat(proxy, owner.apiKey, 'gpt-4o-mini');
    return r.status === 403 ? r : undefined;
  });
  const elapsed = Date.now() - written;
  t.equal(refusal.code, 'model_not_allowed');
  t.ok(elapsed < 1000, `applied within 1 s (took ${elapsed} ms)`);
  t.equal((await chat(proxy, owner.apiKey, 'gpt-4o')).status, 200);

  const version = (await api(cp, 'GET', `/gateways/${gatewayId}/config`, { token: owner.accessToken })).body.version;
  const status = await until('the applied ack', async () => {
    const s = await gatewayStatus(cp, owner, gatewayId);
    return s.appliedVersion === version ? s : undefined;
  });
  t.match(status, { inSync: true, online: true, lastAck: { version, status: 'applied' } });

  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { allowedModels: null } }).then((r) => t.equal(r.status, 400, 'allowedModels does not accept null'));
  const pii = await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { allowedModels: [], piiDetectors: { 'pii.email': 'block' } } });
  t.equal(pii.status, 200);
  const blocked = await until('the proxy to block an email address', async () => {
    const r = await chat(proxy, owner.apiKey, 'gpt-4o-mini', 'write to ada@example.com');
    return r.status !== 200 ? r : undefined;
  });
  t.equal(blocked.status, 403);

  const revoked = await api(cp, 'POST', '/keys', { token: owner.accessToken, body: { name: 'ci' } });
  await until('the new key to be accepted', async () => ((await chat(proxy, revoked.body.key, 'gpt-4o-mini')).status === 200 ? true : undefined));
  await api(cp, 'DELETE', `/keys/${revoked.body.id}`, { token: owner.accessToken });
  await until('the revoked key to be refused', async () => ((await chat(proxy, revoked.body.key, 'gpt-4o-mini')).status === 401 ? true : undefined));
});

t.test('a config that fails the proxy\'s validation is acked rejected with the reason and the previous one keeps serving', async (t) => {
  const { mock, cp, owner, gatewayId } = await setup(t);
  const home = await tempHome(t);
  const proxy = await spawnProxy(t, proxyArgs(cp, owner, gatewayId, mock.url), proxyEnv(home));
  // Only a damaged store could hold such a value: the API refuses it.
  await cp.db.query(`UPDATE workspaces SET settings = '{"allowedModels": "gpt-4o"}' WHERE id = $1`, [owner.workspaceId]);
  const invalidate = await api(cp, 'POST', '/mcp-daemon/policy-invalidate', { token: owner.apiKey });
  t.equal(invalidate.status, 200);
  const status = await until('the rejected ack', async () => {
    const s = await gatewayStatus(cp, owner, gatewayId);
    return s.lastAck?.status === 'rejected' ? s : undefined;
  });
  t.equal(status.lastAck.version, invalidate.body.version);
  t.match(status.lastAck.reason, /config\.settings\.allowedModels/);
  t.equal(status.inSync, false);
  t.equal((await chat(proxy, owner.apiKey, 'gpt-4o-mini')).status, 200, 'the previous config still serves');
});

t.test('control plane down at start: the last good config serves; traces spill while it is down and all are replayed in order after', async (t) => {
  const { mock, cp, owner, gatewayId } = await setup(t);
  const link = await SwitchableLink.open(t, { host: '127.0.0.1', port: cp.port });
  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { allowedModels: ['gpt-4o-mini'] } });
  const home = await tempHome(t);
  const first = await spawnProxy(t, proxyArgs(link, owner, gatewayId, mock.url), proxyEnv(home));
  t.equal((await chat(first, owner.apiKey, 'gpt-4o-mini')).status, 200);
  await until('the first trace at the control plane', async () => ((await api(cp, 'GET', '/traces', { token: owner.accessToken })).body.total === 1 ? true : undefined));
  first.child.kill('SIGTERM');
  await first.exited;

  await link.down();
  const second = await spawnProxy(t, proxyArgs(link, owner, gatewayId, mock.url), proxyEnv(home));
  t.match(second.readyLine, /from the last good config/);
  t.equal((await chat(second, owner.apiKey, 'gpt-4o-mini')).status, 200, 'the synced key and settings serve without the control plane');
  t.equal((await chat(second, owner.apiKey, 'gpt-4o')).status, 403, "the last good config's allowedModels still applies");
  for (let i = 0; i < 8; i++) t.equal((await chat(second, owner.apiKey, 'gpt-4o-mini')).status, 200);
  await until('the traces to spill to disk', async () => {
    const files = await readdir(join(home, 'traces-spill')).catch(() => []);
    return files.length > 0 ? files : undefined;
  });

  await link.up();
  const traces = await until('every spilled trace at the control plane', async () => {
    const r = await api(cp, 'GET', '/traces?limit=100', { token: owner.accessToken });
    return r.body.total === 11 ? (r.body.traces as Array<{ id: string; status: number; time: string }>) : undefined;
  });
  t.equal(traces.filter((tr) => tr.status === 403).length, 1);
  t.equal(new Set(traces.map((tr) => tr.id)).size, 11, 'every trace arrives once');
  await until('the spill to empty', async () => ((await readdir(join(home, 'traces-spill'))).length === 0 ? true : undefined));
  const status = await until('a heartbeat after the control plane is back', async () => {
    const s = await gatewayStatus(cp, owner, gatewayId);
    return s.online && s.lastHeartbeat.tracesSpilled === 0 ? s : undefined;
  });
  t.equal(status.lastHeartbeat.tracesDropped, 0);

  // The proxy reconnected its socket: a change is pushed again.
  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { allowedModels: ['gpt-4o'] } });
  await until('the pushed change after the reconnect', async () => ((await chat(second, owner.apiKey, 'gpt-4o')).status === 200 ? true : undefined));

  // Down again while the proxy is serving: nothing is lost.
  await link.down();
  for (let i = 0; i < 5; i++) t.equal((await chat(second, owner.apiKey, 'gpt-4o')).status, 200, 'serves while the control plane is down');
  await until('the new traces to spill', async () => ((await readdir(join(home, 'traces-spill'))).length > 0 ? true : undefined));
  await link.up();
  const served = await until('all traces at the control plane', async () => {
    const r = await api(cp, 'GET', '/traces?model=gpt-4o&limit=100', { token: owner.accessToken });
    const ok = (r.body.traces as Array<{ status: number }>).filter((tr) => tr.status === 200).length;
    return ok === 6 ? ok : undefined;
  });
  t.equal(served, 6, 'the one served before and the five served while it was down');
});

t.test('past the spill bound, traces are dropped, counted in the heartbeat and logged; the rest are replayed', async (t) => {
  const { mock, cp, owner, gatewayId } = await setup(t);
  const link = await SwitchableLink.open(t, { host: '127.0.0.1', port: cp.port });
  const home = await tempHome(t);
  const proxy = await spawnProxy(t, proxyArgs(link, owner, gatewayId, mock.url), proxyEnv(home, { SVC_TRACE_SPILL_MAX: '4' }));
  t.equal((await chat(proxy, owner.apiKey, 'gpt-4o-mini')).status, 200);
  await until('the first trace', async () => ((await api(cp, 'GET', '/traces', { token: owner.accessToken })).body.total === 1 ? true : undefined));
  await link.down();
  for (let i = 0; i < 6; i++) t.equal((await chat(proxy, owner.apiKey, 'gpt-4o-mini')).status, 200);
  // Every trace must have met the spill before the link comes back: the sixth may still be on its
  // way when the first drop is logged.
  await until('both drops to be logged', async () => (/trace spill full: records dropped/.test(proxy.stderr()) && proxy.stderr().includes('"totalDropped":2') ? true : undefined));
  await link.up();
  const status = await until(
    'a heartbeat with the spill drained and the drops counted',
    async () => {
      const s = await gatewayStatus(cp, owner, gatewayId);
      return s.lastHeartbeat?.tracesSpilled === 0 && (s.lastHeartbeat.tracesDropped ?? 0) > 0 ? s : undefined;
    },
    30_000,
  );
  t.equal((await api(cp, 'GET', '/traces', { token: owner.accessToken })).body.total, 5, 'the first trace and the four the spill held');
  t.match(status.lastHeartbeat, { tracesDropped: 2, tracesSpilled: 0 });
});

t.test('control plane unreachable at start and no last good config: the proxy refuses to start', async (t) => {
  const home = await tempHome(t);
  await t.rejects(
    spawnProxy(t, ['--threads', '1', '--control-plane-url', 'http://127.0.0.1:9', '--api-key', 'vk_0123456789abcdef', '--gateway-id', 'gw_x'], proxyEnv(home)),
    /unreachable .* no last good config/,
  );
});
