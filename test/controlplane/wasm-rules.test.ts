import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { api, memberWithRole, signUp, startTestControlPlane, type Backend, type TestControlPlane } from '../helpers/controlplane.js';
import { compileRules } from '../helpers/wasm.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const backends: Backend[] = ['pglite', 'postgres'];
const modules = await compileRules(t, ['destructive-shell', 'force-push', 'wrong-abi', 'block-everything']);
const base64 = async (name: keyof typeof modules) => (await readFile(modules[name])).toString('base64');
const sha = async (name: keyof typeof modules) => createHash('sha256').update(await readFile(modules[name])).digest('hex');

for (const backend of backends) {
  t.test(backend, async (t) => {
    const cp: TestControlPlane = await startTestControlPlane(t, { backend });
    const owner = await signUp(cp);
    const gateway = await api(cp, 'POST', '/gateways', { token: owner.accessToken, body: { name: 'edge' } });
    const doc = async () => (await api(cp, 'GET', `/gateways/${gateway.body.id}/config`, { token: owner.apiKey })).body;
    // Any member may manage WASM rules (A): a VIEWER's key does all of it here.
    const viewer = await memberWithRole(cp, owner, 'VIEWER');
    const call = (method: string, path: string, body?: unknown) => api(cp, method, path, { token: viewer.apiKey, body });

    t.test('create, read with and without the module, update, delete; each write reaches the config document', async (t) => {
      const v0 = (await doc()).version;
      const created = await call('POST', '/wasm-rules', { name: 'no-rm-rf', wasm: await base64('destructive-shell') });
      t.equal(created.status, 201);
      t.match(created.body, { id: /^wr_/, name: 'no-rm-rf', priority: 100, sha256: await sha('destructive-shell') });
      t.notOk('wasm' in created.body, 'the module is not echoed');
      const document = await doc();
      t.equal(document.version, v0 + 1);
      t.same(document.config.wasmRules, [{ name: 'no-rm-rf', priority: 100, sha256: await sha('destructive-shell'), wasm: await base64('destructive-shell') }]);

      const id = created.body.id as string;
      t.notOk('wasm' in (await call('GET', `/wasm-rules/${id}`)).body);
      t.equal((await call('GET', `/wasm-rules/${id}?include=wasm`)).body.wasm, await base64('destructive-shell'));
      t.equal((await call('GET', '/wasm-rules?include=everything')).status, 400);
      const listed = await call('GET', '/wasm-rules');
      t.equal(listed.body.rules.length, 1);
      t.notOk('wasm' in listed.body.rules[0]);
      t.equal((await call('GET', '/wasm-rules?include=wasm')).body.rules[0].wasm, await base64('destructive-shell'));

      const moved = await call('PUT', `/wasm-rules/${id}`, { priority: 5 });
      t.match(moved.body, { priority: 5, name: 'no-rm-rf', sha256: await sha('destructive-shell') });
      const replaced = await call('PUT', `/wasm-rules/${id}`, { wasm: await base64('force-push'), name: 'no-force-push' });
      t.match(replaced.body, { priority: 5, name: 'no-force-push', sha256: await sha('force-push') });
      t.match((await doc()).config.wasmRules, [{ name: 'no-force-push', priority: 5, sha256: await sha('force-push') }]);
      t.equal((await doc()).version, v0 + 3);

      const other = await call('POST', '/wasm-rules', { name: 'second', priority: 999, wasm: await base64('destructive-shell') });
      t.equal(other.status, 201);
      const taken = await call('PUT', `/wasm-rules/${other.body.id}`, { name: 'no-force-push' });
      t.equal(taken.status, 409);
      t.equal(taken.body.error.code, 'WASM_RULE_NAME_EXISTS');
      t.equal((await call('POST', '/wasm-rules', { name: 'second', wasm: await base64('destructive-shell') })).status, 409);
      t.same((await call('GET', '/wasm-rules')).body.rules.map((r: { name: string }) => r.name), ['no-force-push', 'second'], 'in priority order');

      const replay = await call('POST', `/wasm-rules/${id}/replay`);
      t.equal(replay.status, 501);
      t.equal(replay.body.error.code, 'REPLAY_NOT_AVAILABLE');
      t.equal((await call('POST', '/wasm-rules/wr_missing/replay')).status, 404);

      t.same((await call('DELETE', `/wasm-rules/${id}`)).body, { deleted: true, id });
      t.equal((await call('GET', `/wasm-rules/${id}`)).status, 404);
      t.equal((await call('DELETE', `/wasm-rules/${id}`)).status, 404);
      await call('DELETE', `/wasm-rules/${other.body.id}`);
      t.same((await doc()).config.wasmRules, []);
      const timeline = await api(cp, 'GET', '/audit/timeline', { token: owner.accessToken });
      t.same(
        timeline.body.settingsHistory.filter((e: { key: string }) => e.key === `wasmRules.${id}`).map((e: { action: string }) => e.action),
        ['delete', 'update', 'update', 'create'],
      );
    });

    t.test('a module that is not a rule this gateway runs is a 400 naming why; nothing is stored', async (t) => {
      const v0 = (await doc()).version;
      const refusals: Array<[string, object, RegExp]> = [
        ['not WebAssembly', { name: 'junk', wasm: Buffer.from('#!/bin/sh\nrm -rf /\n').toString('base64') }, /not a valid WebAssembly module/],
        ['another ABI', { name: 'future', wasm: await base64('wrong-abi') }, /ABI version 99/],
        ['blocks a plain read', { name: 'blocker', wasm: await base64('block-everything') }, /allow context/],
        ['over 1 MiB', { name: 'huge', wasm: Buffer.alloc(1024 * 1024 + 3).toString('base64') }, /wasm/],
        ['not base64', { name: 'text', wasm: 'not base64!' }, /wasm/],
        ['a name that is not a slug', { name: '../escape', wasm: await base64('destructive-shell') }, /name/],
        ['an upper-case name', { name: 'Shouty', wasm: await base64('destructive-shell') }, /name/],
        ['a priority past 999', { name: 'late', priority: 1000, wasm: await base64('destructive-shell') }, /priority/],
      ];
      for (const [what, body, message] of refusals) {
        const res = await call('POST', '/wasm-rules', body);
        t.equal(res.status, 400, what);
        t.equal(res.body.error?.code, 'validation', what);
        t.match(res.body.error?.message, message, what);
      }
      t.same((await call('GET', '/wasm-rules')).body.rules, []);
      t.equal((await doc()).version, v0, 'refused writes bump nothing');
      const stranger = await signUp(cp);
      const mine = await call('POST', '/wasm-rules', { name: 'mine', wasm: await base64('destructive-shell') });
      t.equal((await api(cp, 'GET', `/wasm-rules/${mine.body.id}`, { token: stranger.accessToken })).status, 404, 'another workspace cannot read it');
      t.equal((await call('PUT', `/wasm-rules/${mine.body.id}`, { wasm: await base64('wrong-abi') })).status, 400, 'an update is checked as a create');
      t.equal((await call('GET', `/wasm-rules/${mine.body.id}?include=wasm`)).body.wasm, await base64('destructive-shell'));
      await call('DELETE', `/wasm-rules/${mine.body.id}`);
    });
  });
}
