import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayConfigDocumentSchema } from '../../src/config/sync-document.js';
import { runtimeConfigFromDocument } from '../../src/config/sync-runtime.js';
import { materializeWasmRules } from '../../src/config/sync-wasm.js';

// The smallest valid modules: the header, then an empty custom section naming them apart.
const moduleBytes = (tag: number) => Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x61 + tag]);
const entry = (name: string, priority: number, tag: number) => {
  const bytes = moduleBytes(tag);
  return { name, priority, sha256: createHash('sha256').update(bytes).digest('hex'), wasm: bytes.toString('base64') };
};

function documentWith(config: Record<string, unknown>) {
  return gatewayConfigDocumentSchema.safeParse({
    gatewayId: 'gw_1',
    workspaceId: 'ws_1',
    version: 3,
    config: { keys: [], providers: {}, settings: {}, budget: { dailyUsd: null, monthlyUsd: null }, byokRequired: false, ...config },
  });
}

t.test('the rules folder ends up with exactly the control plane\'s cp- files; local rules are never touched', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-sync-wasm-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, '100_local.wasm'), moduleBytes(9));
  await writeFile(join(dir, 'notes.txt'), 'not a rule');

  const first = await materializeWasmRules(dir, [entry('a', 10, 1), entry('b', 20, 2)]);
  t.same(first, { written: ['10_cp-a.wasm', '20_cp-b.wasm'], removed: [] });
  t.same(await readFile(join(dir, '10_cp-a.wasm')), moduleBytes(1));
  const untouched = (await stat(join(dir, '20_cp-b.wasm'))).ino;

  const second = await materializeWasmRules(dir, [entry('a', 15, 3), entry('b', 20, 2)]);
  t.same(second, { written: ['15_cp-a.wasm'], removed: ['10_cp-a.wasm'] }, 'a moved rule is rewritten under its new priority, an unchanged one is left');
  t.equal((await stat(join(dir, '20_cp-b.wasm'))).ino, untouched);
  t.same(await readFile(join(dir, '15_cp-a.wasm')), moduleBytes(3));

  t.same(await materializeWasmRules(dir, []), { written: [], removed: ['15_cp-a.wasm', '20_cp-b.wasm'].sort() });
  t.same((await readdir(dir)).sort(), ['100_local.wasm', 'notes.txt']);
});

t.test('the document refuses modules that do not match their hash or are not WebAssembly, and clashing names or rule ids', async (t) => {
  t.ok(documentWith({ wasmRules: [entry('a', 1, 1)] }).success);
  t.ok(documentWith({}).success, 'a control plane without policies or WASM rules is still read');
  const issues = (config: Record<string, unknown>) => {
    const r = documentWith(config);
    return r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
  };
  t.same(issues({ wasmRules: [{ ...entry('a', 1, 1), sha256: '0'.repeat(64) }] }), ['config.wasmRules.0.sha256']);
  const text = Buffer.from('not wasm');
  t.same(issues({ wasmRules: [{ name: 'a', priority: 1, sha256: createHash('sha256').update(text).digest('hex'), wasm: text.toString('base64') }] }), ['config.wasmRules.0.wasm']);
  t.same(issues({ wasmRules: [entry('a', 1, 1), entry('a', 2, 2)] }), ['config.wasmRules.1.name']);
  t.same(issues({ wasmRules: [entry('../x', 1, 1)] }), ['config.wasmRules.0.name']);
  const record = { id: 'r1', on: 'response', questions: { q: { type: 'yes_no', ask: 'Is it?' } }, when: 'q' };
  t.same(issues({ policies: [{ id: 'p1', name: 'one', version: 1, decide_rules: [{ ...record, when: 'nope' }] }] }), ['config.policies.0.decide_rules.0.when']);
  t.same(
    issues({ policies: [{ id: 'p1', name: 'one', version: 1, decide_rules: [record] }, { id: 'p2', name: 'two', version: 2, decide_rules: [record] }] }),
    ['config.policies.1.decide_rules'],
  );
});

t.test('the decide rules of the policies follow the config file\'s own', async (t) => {
  const record = (id: string) => ({ id, on: 'response', questions: { q: { type: 'yes_no', ask: 'Is it?' } }, when: 'q' });
  const parsed = documentWith({ policies: [{ id: 'p1', name: 'one', version: 4, decide_rules: [record('from-policy')] }] });
  if (!parsed.success) throw parsed.error;
  const config = runtimeConfigFromDocument(parsed.data, { file: { decide_rules: [record('local')] }, upstreamUrl: undefined, extraKeys: [] });
  t.match(config.decideRules, [{ id: 'local' }, { id: 'from-policy', rollout: 'shadow' }]);
});
