import t from 'tap';
import { allRoutes } from '../../src/controlplane/routes/index.js';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';

const cp = await startTestControlPlane(t);
const owner = await signUp(cp);
const members = {
  ADMIN: await memberWithRole(cp, owner, 'ADMIN'),
  EM: await memberWithRole(cp, owner, 'EM'),
  DEVELOPER: await memberWithRole(cp, owner, 'DEVELOPER'),
  VIEWER: await memberWithRole(cp, owner, 'VIEWER'),
};

const ALLOWED = {
  A: ['ADMIN', 'EM', 'DEVELOPER', 'VIEWER'],
  SESSION: ['ADMIN', 'EM', 'DEVELOPER', 'VIEWER'],
  OA: ['ADMIN'],
  OAE: ['ADMIN', 'EM'],
  OAED: ['ADMIN', 'EM', 'DEVELOPER'],
} as const;

const concrete = (path: string) => path.replace(':provider', 'openai').replace(/:\w+/g, 'nothing_here');

// Side effects of a permitted call would change what later calls see (logout ends the session).
const SKIP_ALLOWED_CALL = new Set(['POST /auth/logout', 'POST /auth/change-password']);
// A gateway rotates its own token with that token; every member key is refused.
const GATEWAY_ONLY = new Set(['POST /gateways/:id/self-rotate']);

for (const r of allRoutes.filter((r) => r.access !== 'P')) {
  const name = `${r.method} ${r.path}`;
  t.test(`${name} (${r.access})`, async (t) => {
    const path = concrete(r.path);
    const anonymous = await api(cp, r.method, path, { body: r.body ? {} : undefined });
    t.equal(anonymous.status, 401, 'no credentials: 401');
    t.equal((await api(cp, r.method, path, { token: 'vk_not_a_real_key_at_all', body: r.body ? {} : undefined })).status, 401, 'unknown key: 401');
    for (const [role, member] of Object.entries(members)) {
      const allowed = (ALLOWED[r.access] as readonly string[]).includes(role);
      if (allowed && SKIP_ALLOWED_CALL.has(name)) continue;
      const res = await api(cp, r.method, path, { token: member.accessToken, body: r.body ? {} : undefined });
      if (allowed && !GATEWAY_ONLY.has(name)) t.not(res.status, 403, `${role} may call it`);
      else {
        t.equal(res.status, 403, `${role} gets 403`);
        t.equal(res.body.error.code, 'FORBIDDEN');
      }
    }
  });
}

t.test('a SESSION route refuses a vk_ key with 401', async (t) => {
  const res = await api(cp, 'POST', '/auth/logout', { token: owner.apiKey });
  t.equal(res.status, 401);
});

t.test('public routes answer without credentials', async (t) => {
  t.equal((await api(cp, 'GET', '/openapi.json')).status, 200);
  t.equal((await api(cp, 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } })).status, 200);
});
