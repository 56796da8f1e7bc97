import t from 'tap';
import { WebSocket } from 'undici';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';

const cp = await startTestControlPlane(t);

async function register(token: string, name = 'edge') {
  const res = await api(cp, 'POST', '/gateways', { token, body: { name } });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; token: string };
}

t.test('a gateway token reaches only what a gateway needs, and only its own gateway', async (t) => {
  const owner = await signUp(cp);
  const gw = await register(owner.accessToken);
  const other = await register(owner.accessToken, 'other');
  await api(cp, 'PUT', '/workspace/provider-credentials/openai', { token: owner.accessToken, body: { fields: { apiKey: 'sk-provider-key-77' } } });

  const config = await api(cp, 'GET', `/gateways/${gw.id}/config`, { token: gw.token });
  t.equal(config.status, 200);
  t.same(config.body.config.providers.openai, { apiKey: 'sk-provider-key-77' }, 'the gateway gets its provider credentials with its own token');
  t.equal((await api(cp, 'POST', `/gateways/${gw.id}/heartbeat`, { token: gw.token, body: { inflight: 1 } })).status, 200);
  t.equal((await api(cp, 'GET', `/gateways/${gw.id}/status`, { token: gw.token })).status, 200);

  for (const [method, path] of [
    ['GET', '/members'],
    ['GET', '/gateways'],
    ['POST', '/keys'],
    ['GET', '/workspace/settings'],
    ['DELETE', `/gateways/${gw.id}`],
  ] as const) {
    const res = await api(cp, method, path, { token: gw.token, body: method === 'POST' ? { name: 'x' } : undefined });
    t.equal(res.status, 403, `${method} ${path} is not for a gateway token`);
    t.equal(res.body.error.code, 'FORBIDDEN');
  }
  t.equal((await api(cp, 'GET', `/gateways/${other.id}/config`, { token: gw.token })).status, 403, "another gateway's config is refused");
  t.equal((await api(cp, 'POST', `/gateways/${other.id}/self-rotate`, { token: gw.token, body: {} })).status, 403, 'a gateway rotates only its own token');

  const stranger = await signUp(cp);
  t.equal((await api(cp, 'GET', `/gateways/${gw.id}/config`, { token: stranger.apiKey })).status, 404, "another workspace's member does not see it");
});

t.test('self-rotation with a grace period; a member cannot self-rotate; rotation and revocation close push sockets', async (t) => {
  const owner = await signUp(cp);
  const admin = await memberWithRole(cp, owner, 'ADMIN');
  const gw = await register(admin.accessToken);

  const asMember = await api(cp, 'POST', `/gateways/${gw.id}/self-rotate`, { token: owner.apiKey, body: {} });
  t.equal(asMember.status, 403);
  t.match(asMember.body.error.message, /gwt_ token/);

  const socket = new WebSocket(`${cp.url.replace('http', 'ws')}/api/v1/sync/ws`, { headers: { authorization: `Bearer ${gw.token}` } });
  const closed = new Promise((resolve) => socket.addEventListener('close', resolve));
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve);
    socket.addEventListener('error', reject);
  });

  const rotated = await api(cp, 'POST', `/gateways/${gw.id}/self-rotate`, { token: gw.token, body: { graceSeconds: 300 } });
  t.equal(rotated.status, 200);
  t.match(rotated.body, { id: gw.id, token: /^gwt_/ });
  t.ok(rotated.body.previousTokenValidUntil, 'the old token has a grace period');
  t.equal((await api(cp, 'GET', `/gateways/${gw.id}/status`, { token: gw.token })).status, 200, 'the old token works during its grace');
  t.equal((await api(cp, 'GET', `/gateways/${gw.id}/status`, { token: rotated.body.token })).status, 200, 'the new one works');

  // An admin rotation without grace ends both earlier tokens and the socket of the first.
  const again = await api(cp, 'POST', `/gateways/${gw.id}/rotate`, { token: admin.accessToken, body: {} });
  t.equal(again.status, 200);
  t.equal((await api(cp, 'GET', `/gateways/${gw.id}/status`, { token: gw.token })).status, 401);
  t.equal((await api(cp, 'GET', `/gateways/${gw.id}/status`, { token: rotated.body.token })).status, 401);
  await closed;
  t.pass('the push socket of a rotated token is closed');

  const bad = await api(cp, 'POST', `/gateways/${gw.id}/rotate`, { token: admin.accessToken, body: { graceSeconds: 86_401 } });
  t.equal(bad.status, 400, 'a grace over a day is refused');

  const socket2 = new WebSocket(`${cp.url.replace('http', 'ws')}/api/v1/sync/ws`, { headers: { authorization: `Bearer ${again.body.token}` } });
  const closed2 = new Promise((resolve) => socket2.addEventListener('close', resolve));
  await new Promise((resolve, reject) => {
    socket2.addEventListener('open', resolve);
    socket2.addEventListener('error', reject);
  });
  t.equal((await api(cp, 'DELETE', `/gateways/${gw.id}`, { token: admin.accessToken })).status, 200);
  await closed2;
  t.pass('the push socket of a revoked gateway is closed');
  t.equal((await api(cp, 'DELETE', `/gateways/${gw.id}`, { token: admin.accessToken })).status, 404, 'revoking twice: not found');

  // The gateway outlives the member who registered it.
  const registeredByAdmin = await register(admin.accessToken, 'kept');
  t.equal((await api(cp, 'DELETE', `/members/${admin.memberId}`, { token: owner.accessToken })).status, 200);
  t.equal((await api(cp, 'GET', `/gateways/${registeredByAdmin.id}/config`, { token: registeredByAdmin.token })).status, 200, 'a gateway belongs to the workspace, not to who registered it');
});

t.test('the grace period ends', async (t) => {
  const owner = await signUp(cp);
  const gw = await register(owner.accessToken);
  const rotated = await api(cp, 'POST', `/gateways/${gw.id}/rotate`, { token: owner.accessToken, body: { graceSeconds: 1 } });
  t.equal(rotated.status, 200);
  // The grace is kept in the database's own time, so wait for it rather than move the clock.
  const deadline = Date.now() + 30_000;
  let status = 200;
  while (status === 200 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await api(cp, 'GET', `/gateways/${gw.id}/status`, { token: gw.token })).status;
  }
  t.equal(status, 401, 'the old token stops after its grace');
});

t.test('PATCH /gateways/:id/config validates and bumps the config version; PATCH /workspace/gateway checks the gateway', async (t) => {
  const owner = await signUp(cp);
  const gw = await register(owner.accessToken);
  const before = (await api(cp, 'GET', `/gateways/${gw.id}/status`, { token: owner.accessToken })).body.currentVersion;
  t.equal((await api(cp, 'PATCH', `/gateways/${gw.id}/config`, { token: owner.accessToken, body: {} })).status, 400, 'an empty change');
  t.equal((await api(cp, 'PATCH', `/gateways/${gw.id}/config`, { token: owner.accessToken, body: { url: 'file:///etc/passwd' } })).status, 400, 'a url is http(s)');
  t.equal((await api(cp, 'PATCH', `/gateways/${gw.id}/config`, { token: owner.accessToken, body: { deploymentTarget: 'mainframe' } })).status, 400);
  t.equal((await api(cp, 'PATCH', `/gateways/${gw.id}/config`, { token: owner.accessToken, body: { name: 'x', extra: 1 } })).status, 400, 'unknown fields');
  const changed = await api(cp, 'PATCH', `/gateways/${gw.id}/config`, { token: owner.accessToken, body: { byokRequired: true } });
  t.equal(changed.status, 200);
  t.equal(changed.body.currentVersion, before + 1);
  t.equal((await api(cp, 'GET', `/gateways/${gw.id}/config`, { token: gw.token })).body.config.byokRequired, true);
  t.equal((await api(cp, 'PATCH', '/workspace/gateway', { token: owner.accessToken, body: { gatewayId: 'gw_01ARZ3NDEKTSV4RRFFQ69G5FAV' } })).status, 404);
  t.equal((await api(cp, 'PATCH', '/workspace/gateway', { token: owner.accessToken, body: {} })).status, 400, 'gatewayId is required (null to clear)');
  t.equal((await api(cp, 'PUT', '/workspace/gateway', { token: owner.accessToken, body: { gatewayId: null } })).status, 405);
});
