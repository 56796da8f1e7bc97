import t from 'tap';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';

t.test('signup creates a user, a free_trial workspace and a vk_ key; the key and the access token both authenticate', async (t) => {
  const cp = await startTestControlPlane(t);
  const res = await api(cp, 'POST', '/auth/signup', { body: { email: 'Ada@Example.com', password: 'password123', name: 'Ada', workspaceName: 'Engines' } });
  t.equal(res.status, 201);
  t.equal(res.body.workspace.plan, 'free_trial');
  t.equal(res.body.workspace.name, 'Engines');
  t.match(res.body.apiKey.key, /^vk_/);
  t.match(res.body.refreshToken, /^rt_/);
  const byKey = await api(cp, 'GET', '/auth/me', { token: res.body.apiKey.key });
  t.equal(byKey.status, 200);
  t.match(byKey.body, { role: 'OWNER', user: { email: 'ada@example.com' }, workspace: { plan: 'free_trial' } });
  const byJwt = await api(cp, 'GET', '/auth/me', { token: res.body.accessToken });
  t.equal(byJwt.body.id, byKey.body.id);
});
