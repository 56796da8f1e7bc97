import t from 'tap';
import { WebSocket } from 'undici';
import { hashKey } from '../../src/config/runtime.js';
import { gatewayConfigDocumentSchema } from '../../src/config/sync-document.js';
import { api, memberWithRole, signUp, startTestControlPlane, type Account, type Backend, type TestControlPlane } from '../helpers/controlplane.js';
import { until } from '../helpers/until.js';

const backends: Backend[] = ['pglite', 'postgres'];

// The sync path end to end on each storage backend.
for (const backend of backends) {
  t.test(backend, async (t) => {
    const cp: TestControlPlane = await startTestControlPlane(t, { backend });

    async function withGateway(t: Tap.Test) {
      const owner = await signUp(cp);
      const gw = await api(cp, 'POST', '/gateways', { token: owner.accessToken, body: { name: 'edge', byokRequired: true } });
      t.equal(gw.status, 201);
      return { owner, gatewayId: gw.body.id as string };
    }

    const config = (owner: Account, id: string, headers: Record<string, string> = {}) => api(cp, 'GET', `/gateways/${id}/config`, { token: owner.apiKey, headers });

    /** Announcements received on the sync socket. */
    async function listen(t: Tap.Test, token: string) {
      const messages: Array<{ type: string; version: number; workspaceId: string }> = [];
      const socket = new WebSocket(`${cp.url.replace('http', 'ws')}/api/v1/sync/ws`, { headers: { authorization: `Bearer ${token}` } });
      t.teardown(() => socket.close());
      socket.addEventListener('message', (e) => messages.push(JSON.parse(String(e.data))));
      await new Promise((resolve, reject) => {
        socket.addEventListener('open', resolve);
        socket.addEventListener('error', reject);
      });
      return messages;
    }

    t.test('the config document: everything the proxy needs, valid under the proxy schema, with key hashes the proxy matches', async (t) => {
      const { owner, gatewayId } = await withGateway(t);
      await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { allowedModels: ['gpt-4o'], byocStorage: { provider: 's3', secretAccessKey: 'bucket-secret-1' } } });
      await api(cp, 'PUT', '/workspace/provider-credentials/openai', { token: owner.accessToken, body: { fields: { apiKey: 'sk-provider-key-1' } } });
      await api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { dailyUsd: 25 } });
      const res = await config(owner, gatewayId);
      t.equal(res.status, 200);
      const doc = gatewayConfigDocumentSchema.parse(res.body);
      t.equal(doc.gatewayId, gatewayId);
      t.equal(doc.workspaceId, owner.workspaceId);
      t.same(doc.config.keys.map((k) => 'sha256' in k && k.sha256), [hashKey(owner.apiKey)]);
      t.same(doc.config.providers.openai, { apiKey: 'sk-provider-key-1' }, 'the gateway gets the credential itself');
      t.same(doc.config.settings.allowedModels, ['gpt-4o']);
      t.notOk(JSON.stringify(doc).includes('bucket-secret-1'), 'byocStorage secrets are not for the proxy');
      t.same(doc.config.budget, { dailyUsd: 25, monthlyUsd: null });
      t.equal(doc.config.byokRequired, true);
      t.equal(res.headers.etag, `"${gatewayId}-v${doc.version}"`);
      const other = await signUp(cp);
      t.equal((await config(other, gatewayId)).status, 404, "another workspace's gateway is not found");
    });

    t.test("provider secrets go only to an owner's or admin's key; a viewer's key gets the rest of the config", async (t) => {
      const { owner, gatewayId } = await withGateway(t);
      await api(cp, 'PUT', '/workspace/provider-credentials/openai', { token: owner.accessToken, body: { fields: { apiKey: 'sk-provider-key-2' } } });
      for (const role of ['ADMIN', 'VIEWER'] as const) {
        const member = await memberWithRole(cp, owner, role);
        const res = await api(cp, 'GET', `/gateways/${gatewayId}/config`, { token: member.apiKey });
        t.equal(res.status, 200, role);
        const doc = gatewayConfigDocumentSchema.parse(res.body);
        if (role === 'ADMIN') t.same(doc.config.providers.openai, { apiKey: 'sk-provider-key-2' }, 'an admin key syncs the credential');
        else {
          t.same(doc.config.providers, {}, 'a viewer key gets no credential');
          t.notOk(JSON.stringify(res.body).includes('sk-provider-key-2'));
          t.match(res.headers.etag, /-nosecrets"$/, 'its own tag, so a cached secretless copy is never taken for the full one');
        }
      }
    });

    t.test('ETag / If-None-Match: 304 while the version holds, 200 with a new ETag after a change', async (t) => {
      const { owner, gatewayId } = await withGateway(t);
      const first = await config(owner, gatewayId);
      const etag = first.headers.etag as string;
      const same = await config(owner, gatewayId, { 'if-none-match': etag });
      t.equal(same.status, 304);
      t.equal(same.body, undefined);
      t.equal(same.headers.etag, etag);
      t.equal((await config(owner, gatewayId, { 'if-none-match': `"other", ${etag}` })).status, 304, 'a list of tags');
      t.equal((await config(owner, gatewayId, { 'if-none-match': '"stale"' })).status, 200);
      await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { egressMode: 'monitor' } });
      const changed = await config(owner, gatewayId, { 'if-none-match': etag });
      t.equal(changed.status, 200);
      t.not(changed.headers.etag, etag);
      t.equal(changed.body.version, first.body.version + 1);
    });

    t.test('every settings, credentials, keys or budget write and policy-invalidate bumps the version and is announced on the socket at once', async (t) => {
      const { owner, gatewayId } = await withGateway(t);
      const messages = await listen(t, owner.apiKey);
      const start = (await until('the current version on connect', () => messages[0])).version;
      t.equal(start, (await config(owner, gatewayId)).body.version, 'the current version on connect');
      const writes: Array<[string, () => Promise<unknown>]> = [
        ['settings', () => api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { allowedModels: ['a'] } })],
        ['posture', () => api(cp, 'POST', '/workspace/posture', { token: owner.accessToken, body: { security: 'strict' } })],
        ['credential put', () => api(cp, 'PUT', '/workspace/provider-credentials/groq', { token: owner.accessToken, body: { fields: { apiKey: 'groq-key-1234' } } })],
        ['credential delete', () => api(cp, 'DELETE', '/workspace/provider-credentials/groq', { token: owner.accessToken })],
        ['key create', () => api(cp, 'POST', '/keys', { token: owner.accessToken, body: { name: 'k' } })],
        ['budget', () => api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { monthlyUsd: 500 } })],
        ['policy-invalidate', () => api(cp, 'POST', '/mcp-daemon/policy-invalidate', { token: owner.apiKey })],
      ];
      let expected = start;
      for (const [what, write] of writes) {
        await write();
        expected++;
        const announced = await until(`version ${expected} announced`, () => messages.find((m) => m.version === expected));
        t.match(announced, { type: 'config', workspaceId: owner.workspaceId }, `${what} announced`);
        t.equal((await config(owner, gatewayId)).body.version, expected, `${what} bumped the version`);
      }
      const refused = await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { allowedModels: 'x' } });
      t.equal(refused.status, 400);
      t.equal((await config(owner, gatewayId)).body.version, expected, 'a refused write bumps nothing');
      const other = await signUp(cp);
      const otherMessages = await listen(t, other.apiKey);
      await until("the other workspace's socket", () => otherMessages[0]);
      await api(cp, 'POST', '/mcp-daemon/policy-invalidate', { token: owner.apiKey });
      await until(`version ${expected + 1} announced`, () => messages.find((m) => m.version === expected + 1));
      t.equal(otherMessages.length, 1, 'another workspace hears nothing');
    });

    t.test('the socket refuses a caller without valid credentials', async (t) => {
      const socket = new WebSocket(`${cp.url.replace('http', 'ws')}/api/v1/sync/ws`, { headers: { authorization: 'Bearer vk_wrong_key_value' } });
      const outcome = await new Promise((resolve) => {
        socket.addEventListener('open', () => resolve('open'));
        socket.addEventListener('error', () => resolve('refused'));
      });
      t.equal(outcome, 'refused');
    });

    t.test('config-ack, heartbeat and status', async (t) => {
      const { owner, gatewayId } = await withGateway(t);
      const version = (await config(owner, gatewayId)).body.version;
      let status = (await api(cp, 'GET', `/gateways/${gatewayId}/status`, { token: owner.apiKey })).body;
      t.match(status, { id: gatewayId, online: false, appliedVersion: null, currentVersion: version, inSync: false, lastAck: null });
      t.equal((await api(cp, 'POST', `/gateways/${gatewayId}/config-ack`, { token: owner.apiKey, body: { version, status: 'rejected' } })).status, 400, 'a rejection needs its reason');
      t.equal((await api(cp, 'POST', `/gateways/${gatewayId}/config-ack`, { token: owner.apiKey, body: { version: 0, status: 'applied' } })).status, 400);
      t.equal((await api(cp, 'POST', `/gateways/${gatewayId}/config-ack`, { token: owner.apiKey, body: { version, status: 'done' } })).status, 400);
      t.same((await api(cp, 'POST', `/gateways/${gatewayId}/config-ack`, { token: owner.apiKey, body: { version, status: 'applied' } })).body, { acknowledged: true });
      const beat = await api(cp, 'POST', `/gateways/${gatewayId}/heartbeat`, { token: owner.apiKey, body: { configVersion: version, inflight: 2, tracesSpilled: 0, tracesDropped: 0 } });
      t.same(beat.body, { ok: true, configVersion: version });
      t.equal((await api(cp, 'POST', `/gateways/${gatewayId}/heartbeat`, { token: owner.apiKey, body: { inflight: -1 } })).status, 400);
      status = (await api(cp, 'GET', `/gateways/${gatewayId}/status`, { token: owner.apiKey })).body;
      t.match(status, { online: true, appliedVersion: version, inSync: true, lastAck: { version, status: 'applied' }, lastHeartbeat: { inflight: 2 } });
      await api(cp, 'POST', `/gateways/${gatewayId}/config-ack`, { token: owner.apiKey, body: { version: version + 1, status: 'rejected', reason: 'bad settings' } });
      status = (await api(cp, 'GET', `/gateways/${gatewayId}/status`, { token: owner.apiKey })).body;
      t.match(status, { appliedVersion: version, lastAck: { status: 'rejected', reason: 'bad settings' } }, 'a rejection keeps the applied version');
      const list = await api(cp, 'GET', '/gateways', { token: owner.apiKey });
      t.same(list.body.gateways.map((g: { id: string }) => g.id), [gatewayId]);
      t.equal((await api(cp, 'POST', '/gateways', { token: owner.accessToken, body: { name: '' } })).status, 400);
      t.equal((await api(cp, 'POST', '/gateways/nothing/heartbeat', { token: owner.apiKey, body: {} })).status, 404);
    });
  });
}
