import t from 'tap';
import { startMockProvider } from '../../bench/mock/provider.js';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { spawnProxy } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

t.setTimeout(300_000);

const mock = await startMockProvider();
t.teardown(() => mock.close());
const cp = await startTestControlPlane(t);
const owner = await signUp(cp);
const admin = await memberWithRole(cp, owner, 'ADMIN');
const call = (token: string, method: string, path: string, body?: unknown) => api(cp, method, path, { token, body });

t.test('deactivating a member: their key and session get 401 at the control plane at once, and at a synced proxy with the next push', async (t) => {
  const dev = await memberWithRole(cp, owner, 'DEVELOPER');
  const home = await mkdtemp(join(tmpdir(), 'svc-member-proxy-'));
  t.teardown(() => rm(home, { recursive: true, force: true }));
  const proxy = await spawnProxy(t, ['--threads', '1', '--control-plane-url', cp.url, '--api-key', owner.apiKey, '--upstream-url', mock.url], { SVC_HOME: home });
  const chat = (key: string) =>
    fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) }).then((r) => r.status);
  t.equal(await chat(dev.apiKey), 200, 'the key works at the proxy');

  t.equal((await call(admin.accessToken, 'DELETE', `/members/${owner.memberId}`)).status, 403, 'the OWNER cannot be deactivated');
  t.equal((await call(admin.accessToken, 'DELETE', `/members/${admin.memberId}`)).status, 409, 'nor oneself');
  t.equal((await call(dev.accessToken, 'DELETE', `/members/${admin.memberId}`)).status, 403, 'a DEVELOPER cannot');
  const done = await call(admin.accessToken, 'DELETE', `/members/${dev.memberId}`);
  t.match(done.body, { deactivated: true, keysRevoked: 1, sessionsEnded: 1 });
  t.equal((await call(dev.apiKey, 'GET', '/auth/me')).status, 401, 'the key is refused by the control plane at once');
  t.equal((await call(dev.accessToken, 'GET', '/auth/me')).status, 401, 'and the session');
  t.equal(await until('the proxy drops the key', async () => ((await chat(dev.apiKey)) === 401 ? true : undefined), 60_000), true, 'the proxy refuses it after the push');
  t.equal(await chat(owner.apiKey), 200, 'others go on');
  t.equal((await call(admin.accessToken, 'DELETE', `/members/${dev.memberId}`)).status, 409, 'already deactivated');
  t.match((await call(owner.accessToken, 'GET', '/members')).body.members.find((m: { memberId: string }) => m.memberId === dev.memberId), { active: false, deactivatedAt: /^20/ });

  t.equal((await call(admin.accessToken, 'POST', `/members/${dev.memberId}/reactivate`)).status, 200);
  t.equal((await call(dev.apiKey, 'GET', '/auth/me')).status, 401, 'reactivated, the old key stays revoked');
  t.equal((await call(admin.accessToken, 'POST', `/members/${dev.memberId}/reactivate`)).status, 409);
});

t.test("role changes: never to OWNER, never the OWNER's, effective at once, on the audit timeline", async (t) => {
  const dev = await memberWithRole(cp, owner, 'DEVELOPER');
  t.equal((await call(dev.apiKey, 'GET', '/policies')).status, 403, 'a DEVELOPER cannot list policies');
  t.equal((await call(admin.accessToken, 'PUT', `/members/${dev.memberId}/role`, { role: 'OWNER' })).status, 400);
  t.equal((await call(admin.accessToken, 'PUT', `/members/${owner.memberId}/role`, { role: 'VIEWER' })).status, 403, 'an ADMIN cannot demote the OWNER');
  t.equal((await call(owner.accessToken, 'PUT', `/members/${owner.memberId}/role`, { role: 'ADMIN' })).status, 403, 'the OWNER keeps the role');
  t.match((await call(admin.accessToken, 'PUT', `/members/${dev.memberId}/role`, { role: 'EM' })).body, { role: 'EM', previousRole: 'DEVELOPER' });
  t.equal((await call(dev.apiKey, 'GET', '/policies')).status, 200, 'the same key, now an EM');
  t.equal((await call(admin.accessToken, 'PUT', '/members/mem_nobody/role', { role: 'EM' })).status, 404);
  const kinds = (await call(owner.accessToken, 'GET', '/audit/timeline?limit=500')).body.events.map((e: { kind: string }) => e.kind);
  t.ok(kinds.includes('member.role_changed') && kinds.includes('member.deactivated') && kinds.includes('member.reactivated'), 'every change on the audit timeline');
});
