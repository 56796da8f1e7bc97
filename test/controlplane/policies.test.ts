import t from 'tap';
import { api, memberWithRole, signUp, startTestControlPlane, type Account, type Backend, type TestControlPlane } from '../helpers/controlplane.js';
import { DROP_TABLE_RECORD } from '../helpers/decide.js';

const backends: Backend[] = ['pglite', 'postgres'];

const DROP = DROP_TABLE_RECORD;
const LEAK = { id: 'no-secret-echo', on: 'response', questions: { leaks: { type: 'yes_no', ask: 'Does the answer print a secret?' } }, when: 'leaks' };

for (const backend of backends) {
  t.test(backend, async (t) => {
    const cp: TestControlPlane = await startTestControlPlane(t, { backend });
    const owner = await signUp(cp);
    const gateway = await api(cp, 'POST', '/gateways', { token: owner.accessToken, body: { name: 'edge' } });
    const doc = async (who: Account = owner) => (await api(cp, 'GET', `/gateways/${gateway.body.id}/config`, { token: who.apiKey })).body;
    const call = (method: string, path: string, body?: unknown, token = owner.accessToken) => api(cp, method, path, { token, body });

    t.test('create records version 1 with the decide records as the proxy reads them, and bumps the config version', async (t) => {
      const before = (await doc()).version;
      const created = await call('POST', '/policies', { name: 'prod-safety', description: 'no drops', decide_rules: [DROP, LEAK] });
      t.equal(created.status, 201);
      t.match(created.body, { id: /^pol_/, name: 'prod-safety', description: 'no drops', enabled: true, version: 1 });
      t.same(created.body.decide_rules[1], { ...LEAK, tools: [], rollout: 'shadow', escalate: 'ask' }, 'defaults filled in by the decide record schema');
      const after = await doc();
      t.equal(after.version, before + 1);
      t.same(after.config.policies, [{ id: created.body.id, name: 'prod-safety', version: 1, decide_rules: created.body.decide_rules }]);
      await call('DELETE', `/policies/${created.body.id}`);
    });

    t.test('invalid decide records are a 400 naming the index and the field; nothing is stored', async (t) => {
      const before = (await doc()).version;
      const missing = await call('POST', '/policies', { name: 'broken', decide_rules: [DROP, { ...LEAK, questions: undefined }] });
      t.equal(missing.status, 400);
      t.equal(missing.body.error.code, 'validation');
      t.match(missing.body.error.message, /decide_rules\.1\.questions/);
      const when = await call('POST', '/policies', { name: 'broken', decide_rules: [{ ...DROP, when: 'drops and deletes' }] });
      t.equal(when.status, 400);
      t.match(when.body.error.details.issues, [{ path: 'decide_rules.0.when', message: /'deletes' is not one of the rule's questions/ }]);
      const mode = await call('POST', '/policies', { name: 'broken', decide_rules: [{ ...DROP, mode: 'enforce' }] });
      t.match(mode.body.error.message, /decide_rules\.0/);
      const twice = await call('POST', '/policies', { name: 'broken', decide_rules: [DROP, DROP] });
      t.match(twice.body.error.details.issues, [{ path: 'decide_rules.1.id' }]);
      for (const body of [{ decide_rules: [] }, { name: '', decide_rules: [] }, { name: 'x'.repeat(129), decide_rules: [] }, { name: 'x', decide_rules: [], extra: 1 }]) {
        t.equal((await call('POST', '/policies', body)).status, 400, JSON.stringify(body).slice(0, 60));
      }
      t.equal((await doc()).version, before, 'refused writes bump nothing');
      t.same((await call('GET', '/policies')).body.policies, []);
    });

    t.test('names are unique among live policies; rule ids unique across them', async (t) => {
      const first = await call('POST', '/policies', { name: 'unique', decide_rules: [DROP] });
      t.equal(first.status, 201);
      const same = await call('POST', '/policies', { name: 'unique', decide_rules: [] });
      t.equal(same.status, 409);
      t.equal(same.body.error.code, 'POLICY_NAME_EXISTS');
      const clash = await call('POST', '/policies', { name: 'other', decide_rules: [LEAK, DROP] });
      t.equal(clash.status, 400);
      t.match(clash.body.error.details.issues, [{ path: 'decide_rules.1.id', message: /already used by policy 'unique'/ }]);
      t.equal((await call('DELETE', `/policies/${first.body.id}`)).status, 200);
      t.equal((await call('POST', '/policies', { name: 'unique', decide_rules: [DROP] })).status, 201, 'a deleted policy frees its name and rule ids');
      const reused = (await call('GET', '/policies')).body.policies.find((p: { name: string }) => p.name === 'unique');
      await call('DELETE', `/policies/${reused.id}`);
    });

    t.test('updates, versions newest first, rollback as a new version, enable/disable, soft delete', async (t) => {
      const created = await call('POST', '/policies', { name: 'lifecycle', decide_rules: [DROP] });
      const id = created.body.id as string;
      let version = (await doc()).version;
      const bumped = async (what: string) => {
        const now = (await doc()).version;
        t.equal(now, version + 1, `${what} bumps the config version`);
        version = now;
      };

      const described = await call('PUT', `/policies/${id}`, { description: 'only a description' });
      t.match(described.body, { version: 2, name: 'lifecycle', description: 'only a description', decide_rules: [{ id: 'no-prod-drop' }] });
      await bumped('an update');
      const rules = await call('PUT', `/policies/${id}`, { decide_rules: [LEAK], name: 'lifecycle-2' });
      t.match(rules.body, { version: 3, name: 'lifecycle-2', description: 'only a description', decide_rules: [{ id: 'no-secret-echo' }] });
      await bumped('an update');
      t.equal((await call('PUT', `/policies/${id}`, {})).status, 400, 'an empty update is refused');
      t.equal((await call('PUT', `/policies/${id}`, { decide_rules: [{ id: 'x' }] })).status, 400);

      const versions = await call('GET', `/policies/${id}/versions`);
      t.equal(versions.status, 200);
      t.same(versions.body.versions.map((v: { version: number; change: string }) => [v.version, v.change]), [[3, 'update'], [2, 'update'], [1, 'create']]);
      t.equal(versions.body.versions[2].memberId, owner.memberId);

      const rolled = await call('POST', `/policies/${id}/rollback`, { version: 1 });
      t.equal(rolled.status, 200);
      t.match(rolled.body, { version: 4, name: 'lifecycle', description: null, decide_rules: [{ id: 'no-prod-drop' }] });
      await bumped('a rollback');
      t.same((await call('GET', `/policies/${id}/versions`)).body.versions.map((v: { version: number }) => v.version), [4, 3, 2, 1]);
      t.equal((await call('POST', `/policies/${id}/rollback`, { version: 9 })).status, 404);
      t.equal((await call('POST', `/policies/${id}/rollback`, { version: 0 })).status, 400);

      const disabled = await call('POST', `/policies/${id}/disable`);
      t.match(disabled.body, { enabled: false, version: 4 });
      await bumped('a disable');
      t.same((await doc()).config.policies, [], 'a disabled policy is not sent to gateways');
      t.match((await call('GET', '/policies')).body.policies, [{ id, enabled: false }], 'but is still listed');
      t.match((await call('POST', `/policies/${id}/enable`)).body, { enabled: true, version: 4 });
      await bumped('an enable');
      t.match((await doc()).config.policies, [{ id, version: 4 }]);

      t.same((await call('DELETE', `/policies/${id}`)).body, { deleted: true, id });
      await bumped('a delete');
      t.same((await call('GET', '/policies')).body.policies, []);
      t.same((await doc()).config.policies, []);
      for (const [method, path, body] of [['PUT', `/policies/${id}`, { name: 'x' }], ['DELETE', `/policies/${id}`], ['POST', `/policies/${id}/enable`], ['POST', `/policies/${id}/rollback`, { version: 1 }]] as const) {
        t.equal((await call(method, path, body)).status, 404, `${method} ${path} of a deleted policy`);
      }
      t.equal((await call('GET', `/policies/${id}/versions`)).body.versions.length, 4, 'its history is kept');

      const timeline = await call('GET', '/audit/timeline');
      const actions = timeline.body.settingsHistory.filter((e: { key: string }) => e.key === `policies.${id}`).map((e: { action: string }) => e.action);
      t.same(actions, ['delete', 'enable', 'disable', 'rollback', 'update', 'update', 'create'], 'every write is in the audit timeline');
    });

    t.test('roles: OAE reads, OA writes; another workspace sees nothing', async (t) => {
      const created = await call('POST', '/policies', { name: 'roles', decide_rules: [] });
      const id = created.body.id as string;
      const em = await memberWithRole(cp, owner, 'EM');
      const admin = await memberWithRole(cp, owner, 'ADMIN');
      const developer = await memberWithRole(cp, owner, 'DEVELOPER');
      t.equal((await call('GET', '/policies', undefined, em.accessToken)).status, 200);
      t.equal((await call('GET', `/policies/${id}/versions`, undefined, em.accessToken)).status, 200);
      t.equal((await call('GET', '/policies', undefined, developer.apiKey)).status, 403);
      t.equal((await call('PUT', `/policies/${id}`, { name: 'em' }, em.accessToken)).status, 403);
      t.equal((await call('POST', `/policies/${id}/disable`, undefined, em.apiKey)).status, 403);
      t.equal((await call('PUT', `/policies/${id}`, { name: 'by-admin' }, admin.apiKey)).status, 200);
      const stranger = await signUp(cp);
      t.same((await call('GET', '/policies', undefined, stranger.accessToken)).body.policies, []);
      t.equal((await call('PUT', `/policies/${id}`, { name: 'mine' }, stranger.accessToken)).status, 404);
      t.equal((await call('GET', `/policies/${id}/versions`, undefined, stranger.accessToken)).status, 404);
      await call('DELETE', `/policies/${id}`);
    });
  });
}
