import t from 'tap';
import { request } from 'undici';
import { hashKey } from '../../src/config/runtime.js';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';

const cp = await startTestControlPlane(t);
let n = 0;
const email = () => `user${++n}-${process.pid}@example.com`;

t.test('signup creates a user, a free_trial workspace and a vk_ key; the key and the access token both authenticate', async (t) => {
  const res = await api(cp, 'POST', '/auth/signup', { body: { email: 'Ada@Example.com', password: 'password123', name: 'Ada', workspaceName: 'Engines' } });
  t.equal(res.status, 201);
  t.match(res.body, { workspace: { plan: 'free_trial', name: 'Engines' }, user: { email: 'ada@example.com', name: 'Ada' }, member: { role: 'OWNER' } });
  t.match(res.body.apiKey.key, /^vk_/);
  t.match(res.body.refreshToken, /^rt_/);
  const byKey = await api(cp, 'GET', '/auth/me', { token: res.body.apiKey.key });
  t.equal(byKey.status, 200);
  t.match(byKey.body, { role: 'OWNER', user: { email: 'ada@example.com' }, workspace: { plan: 'free_trial' } });
  const byJwt = await api(cp, 'GET', '/auth/me', { token: res.body.accessToken });
  t.equal(byJwt.body.id, byKey.body.id);
  const taken = await api(cp, 'POST', '/auth/signup', { body: { email: 'ada@example.com', password: 'password123', name: 'Other' } });
  t.equal(taken.status, 409);
  t.equal(taken.body.error.code, 'EMAIL_ALREADY_EXISTS');
});

t.test('signup validation answers 422 at each bound', async (t) => {
  const ok = { email: email(), password: 'p'.repeat(8), name: 'n', workspaceName: 'w'.repeat(64) };
  t.equal((await api(cp, 'POST', '/auth/signup', { body: ok })).status, 201, 'password 8, name 1, workspaceName 64');
  t.equal((await api(cp, 'POST', '/auth/signup', { body: { email: email(), password: 'p'.repeat(128), name: 'n'.repeat(128) } })).status, 201, 'password 128, name 128');
  const bad = [
    { email: 'not-an-email', password: 'password1', name: 'n' },
    { email: email(), password: 'p'.repeat(7), name: 'n' },
    { email: email(), password: 'p'.repeat(129), name: 'n' },
    { email: email(), password: 'password1', name: '' },
    { email: email(), password: 'password1', name: 'n'.repeat(129) },
    { email: email(), password: 'password1', name: 'n', workspaceName: '' },
    { email: email(), password: 'password1', name: 'n', workspaceName: 'w'.repeat(65) },
    { password: 'password1', name: 'n' },
    { email: email(), password: 'password1', name: 'n', plan: 'enterprise' },
  ];
  for (const body of bad) {
    const res = await api(cp, 'POST', '/auth/signup', { body });
    t.equal(res.status, 422, JSON.stringify(body).slice(0, 80));
    t.equal(res.body.error.code, 'validation');
  }
});

t.test('signup switched off answers 503 SIGNUP_DISABLED', async (t) => {
  const closed = await startTestControlPlane(t, { signupEnabled: false });
  const res = await api(closed, 'POST', '/auth/signup', { body: { email: email(), password: 'password1', name: 'n' } });
  t.equal(res.status, 503);
  t.equal(res.body.error.code, 'SIGNUP_DISABLED');
});

t.test('register: 201, 400 on validation, 409 on an existing email', async (t) => {
  const body = { email: email(), password: 'password1', name: 'Reg' };
  t.equal((await api(cp, 'POST', '/auth/register', { body })).status, 201);
  const again = await api(cp, 'POST', '/auth/register', { body });
  t.equal(again.status, 409);
  t.equal(again.body.error.code, 'EMAIL_ALREADY_EXISTS');
  t.equal((await api(cp, 'POST', '/auth/register', { body: { email: 'x', password: 'password1', name: 'Reg' } })).status, 400);
});

t.test('login, refresh (rotating the refresh token), logout and change-password', async (t) => {
  const owner = await signUp(cp);
  t.equal((await api(cp, 'POST', '/auth/login', { body: { email: owner.email, password: 'wrong password' } })).status, 401);
  t.equal((await api(cp, 'POST', '/auth/login', { body: { email: 'nobody@example.com', password: 'whatever1' } })).status, 401);
  t.equal((await api(cp, 'POST', '/auth/login', { body: { email: owner.email } })).status, 400);
  const login = await api(cp, 'POST', '/auth/login', { body: { email: owner.email.toUpperCase(), password: owner.password } });
  t.equal(login.status, 200);
  t.match(login.body, { tokenType: 'Bearer', expiresIn: Number, refreshToken: /^rt_/ });

  const refreshed = await api(cp, 'POST', '/auth/refresh', { body: { refreshToken: login.body.refreshToken } });
  t.equal(refreshed.status, 200);
  t.equal((await api(cp, 'GET', '/auth/me', { token: refreshed.body.accessToken })).status, 200);
  t.equal((await api(cp, 'POST', '/auth/refresh', { body: { refreshToken: login.body.refreshToken } })).status, 401, 'a used refresh token no longer works');
  t.equal((await api(cp, 'POST', '/auth/refresh', { body: { refreshToken: 'rt_forged' } })).status, 401);
  t.equal((await api(cp, 'POST', '/auth/refresh', { body: {} })).status, 400);

  const out = await api(cp, 'POST', '/auth/logout', { token: refreshed.body.accessToken });
  t.same(out.body, { loggedOut: true });
  t.equal((await api(cp, 'GET', '/auth/me', { token: refreshed.body.accessToken })).status, 401, 'the session is invalidated');
  t.equal((await api(cp, 'POST', '/auth/refresh', { body: { refreshToken: refreshed.body.refreshToken } })).status, 401, 'and its refresh token');
  t.equal((await api(cp, 'GET', '/auth/me', { token: owner.accessToken })).status, 200, 'other sessions live on');

  const wrong = await api(cp, 'POST', '/auth/change-password', { token: owner.accessToken, body: { currentPassword: 'nope', newPassword: 'new-password-1' } });
  t.equal(wrong.status, 401);
  t.equal((await api(cp, 'POST', '/auth/change-password', { token: owner.accessToken, body: { currentPassword: owner.password, newPassword: 'short' } })).status, 400);
  const other = await api(cp, 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
  const changed = await api(cp, 'POST', '/auth/change-password', { token: owner.accessToken, body: { currentPassword: owner.password, newPassword: 'new-password-1' } });
  t.same(changed.body, { changed: true });
  t.equal((await api(cp, 'GET', '/auth/me', { token: other.body.accessToken })).status, 401, "the user's other sessions are signed out");
  t.equal((await api(cp, 'GET', '/auth/me', { token: owner.accessToken })).status, 200, 'the current one stays');
  t.equal((await api(cp, 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } })).status, 401);
  t.equal((await api(cp, 'POST', '/auth/login', { body: { email: owner.email, password: 'new-password-1' } })).status, 200);
});

t.test('a tampered or expired access token is refused', async (t) => {
  const owner = await signUp(cp);
  const [h, p, s] = owner.accessToken.split('.');
  const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
  const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3600 })).toString('base64url')}.${s}`;
  t.equal((await api(cp, 'GET', '/auth/me', { token: forged })).status, 401);
  const expired = cp.server.services.tokens.issueAccess(claims.sub, claims.sid, Date.now() - 2 * 3600_000);
  t.equal((await api(cp, 'GET', '/auth/me', { token: expired })).status, 401);
});

t.test('keys: list, create (shown once, stored hashed as the proxy hashes them), revoke', async (t) => {
  const owner = await signUp(cp);
  const created = await api(cp, 'POST', '/keys', { token: owner.accessToken, body: { name: 'ci' } });
  t.equal(created.status, 201);
  t.match(created.body, { id: /^key_/, key: /^vk_/, name: 'ci', last_four: created.body.key.slice(-4) });
  const [row] = await cp.db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE id = $1', [created.body.id]);
  t.equal(row!.key_hash, hashKey(created.body.key));
  const stored = JSON.stringify(await cp.db.query('SELECT * FROM api_keys WHERE id = $1', [created.body.id]));
  t.notMatch(stored, created.body.key, 'the key itself is not stored');
  const listed = await api(cp, 'GET', '/keys', { token: owner.apiKey });
  t.equal(listed.body.keys.length, 2);
  t.notMatch(JSON.stringify(listed.body), /vk_/, 'a listing never shows a key');
  t.equal((await api(cp, 'GET', '/auth/me', { token: created.body.key })).status, 200);
  t.equal((await api(cp, 'DELETE', `/keys/${created.body.id}`, { token: owner.accessToken })).status, 200);
  t.equal((await api(cp, 'GET', '/auth/me', { token: created.body.key })).status, 401, 'a revoked key stops authenticating');
  t.equal((await api(cp, 'DELETE', `/keys/${created.body.id}`, { token: owner.accessToken })).status, 404);
  t.equal((await api(cp, 'POST', '/keys', { token: owner.accessToken, body: { name: '' } })).status, 400);
  const stranger = await signUp(cp);
  t.equal((await api(cp, 'DELETE', `/keys/${listed.body.keys[0].id}`, { token: stranger.accessToken })).status, 404, "another workspace's key is not found");
});

t.test('intake: unknown routes 404, wrong method 405, bad JSON 400, wrong content type 415, oversized body 413', async (t) => {
  const owner = await signUp(cp);
  t.equal((await api(cp, 'GET', '/nowhere', { token: owner.accessToken })).status, 404);
  const outside = await request(`${cp.url}/elsewhere`);
  t.equal(outside.statusCode, 404);
  await outside.body.dump();
  t.equal((await api(cp, 'PATCH', '/workspace/settings', { token: owner.accessToken })).status, 405);
  t.equal((await api(cp, 'GET', '/traces/%E0%A4%A', { token: owner.accessToken })).status, 404, 'a malformed escape is not found, not a crash');
  const badJson = await api(cp, 'POST', '/keys', { token: owner.accessToken, rawBody: '{"name":' });
  t.equal(badJson.status, 400);
  t.match(badJson.body.error, { code: 'validation', message: /not valid JSON/ });
  t.equal((await api(cp, 'POST', '/keys', { token: owner.accessToken, rawBody: 'name=x', headers: { 'content-type': 'text/plain' } })).status, 415);
  const huge = await api(cp, 'POST', '/keys', { token: owner.accessToken, rawBody: JSON.stringify({ name: 'x'.repeat(9 * 1024 * 1024) }) });
  t.equal(huge.status, 413);
  t.equal(huge.body.error.code, 'PAYLOAD_TOO_LARGE');
});
