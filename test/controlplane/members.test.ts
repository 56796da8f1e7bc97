import t from 'tap';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';

const cp = await startTestControlPlane(t);
let n = 0;
const invitee = (over: Record<string, unknown> = {}) => ({ email: `m${++n}-${process.pid}@example.com`, displayName: 'Grace', role: 'DEVELOPER', tempPassword: 'temp-pass-1', ...over });

t.test('invite creates a member who can sign in with the temporary password; members lists them', async (t) => {
  const owner = await signUp(cp);
  const body = invitee({ role: 'EM' });
  const res = await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body });
  t.equal(res.status, 201);
  t.same(Object.keys(res.body).sort(), ['displayName', 'email', 'memberId', 'role', 'userId', 'workspaceId']);
  t.match(res.body, { email: body.email, displayName: 'Grace', role: 'EM', workspaceId: owner.workspaceId });
  const login = await api(cp, 'POST', '/auth/login', { body: { email: body.email, password: 'temp-pass-1' } });
  t.equal(login.status, 200);
  t.match((await api(cp, 'GET', '/auth/me', { token: login.body.accessToken })).body, { role: 'EM', workspace: { id: owner.workspaceId } });
  const list = await api(cp, 'GET', '/members', { token: login.body.accessToken });
  t.match(list.body.members, [{ role: 'OWNER', email: owner.email }, { role: 'EM', email: body.email, memberId: res.body.memberId }]);
});

t.test('invite validation: OWNER refused, each field and bound checked (400)', async (t) => {
  const owner = await signUp(cp);
  const ok = [invitee({ email: `${'a'.repeat(244)}@example.com` }), invitee({ displayName: 'd'.repeat(128), tempPassword: 'p'.repeat(128) }), invitee({ displayName: 'd', tempPassword: 'p'.repeat(8) })];
  for (const body of ok) t.equal((await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body })).status, 201, `${body.email.length} / ${body.displayName.length}`);
  const bad = [
    invitee({ role: 'OWNER' }),
    invitee({ role: 'SUPERUSER' }),
    invitee({ email: 'not-an-email' }),
    invitee({ email: `${'a'.repeat(245)}@example.com` }),
    invitee({ displayName: '' }),
    invitee({ displayName: 'd'.repeat(129) }),
    invitee({ tempPassword: 'p'.repeat(7) }),
    invitee({ tempPassword: 'p'.repeat(129) }),
    invitee({ tempPassword: undefined }),
    invitee({ role: undefined }),
  ];
  for (const body of bad) {
    const res = await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body });
    t.equal(res.status, 400, JSON.stringify(body).slice(0, 90));
    t.equal(res.body.error.code, 'validation');
  }
  const owners = await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body: invitee({ role: 'OWNER' }) });
  t.match(owners.body.error.message, /OWNER cannot be assigned/);
});

t.test('invite of an existing member: 409 DUPLICATE_MEMBER; a user of another workspace joins as a member', async (t) => {
  const owner = await signUp(cp);
  const body = invitee();
  t.equal((await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body })).status, 201);
  const dup = await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body: { ...body, email: body.email.toUpperCase() } });
  t.equal(dup.status, 409);
  t.equal(dup.body.error.code, 'DUPLICATE_MEMBER');
  const self = await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body: invitee({ email: owner.email }) });
  t.equal(self.body.error.code, 'DUPLICATE_MEMBER');
  const other = await signUp(cp);
  const joined = await api(cp, 'POST', '/members/invite', { token: other.accessToken, body: { ...body } });
  t.equal(joined.status, 201);
  t.equal(joined.body.workspaceId, other.workspaceId);
});

t.test('the seat limit of the plan: 403 past it', async (t) => {
  const owner = await signUp(cp);
  for (let i = 0; i < 4; i++) t.equal((await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body: invitee() })).status, 201);
  const full = await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body: invitee() });
  t.equal(full.status, 403);
  t.match(full.body.error.message, /free_trial plan allows 5 seats/);
  await cp.db.query(`UPDATE workspaces SET plan = 'team' WHERE id = $1`, [owner.workspaceId]);
  t.equal((await api(cp, 'POST', '/members/invite', { token: owner.accessToken, body: invitee() })).status, 201, 'a bigger plan has room');
});
