import t from 'tap';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LastGoodConfig } from '../../src/config/last-good.js';
import { hashKey } from '../../src/config/runtime.js';
import { gatewayConfigDocumentSchema, type GatewayConfigDocument } from '../../src/config/sync-document.js';
import { runtimeConfigFromDocument } from '../../src/config/sync-runtime.js';

const document: GatewayConfigDocument = gatewayConfigDocumentSchema.parse({
  gatewayId: 'gw_1',
  workspaceId: 'ws_1',
  version: 7,
  config: {
    keys: [{ sha256: hashKey('vk_workspace_key_1'), name: 'default', workspaceId: 'ws_1' }],
    providers: { openai: { apiKey: 'sk-workspace-key' } },
    settings: { allowedModels: ['gpt-4o'], piiDetectors: { 'pii.email': 'block' } },
    budget: { dailyUsd: 25, monthlyUsd: null },
    byokRequired: false,
  },
});

t.test("the workspace's parts come from the document, the machine's own from its config file", async (t) => {
  const local = {
    file: {
      keys: [{ key: 'vk_local_machine_key', name: 'local' }],
      providers: { anthropic: { apiKey: 'sk-ant-local-key' }, openai: { apiKey: 'sk-local-openai' } },
      settings: { allowedModels: ['ignored'] },
      limits: { maxBodyBytes: 4096 },
      piiDetectors: { 'pii.card': 'block' },
      egress: { mode: 'monitor', allow: ['example.com'] },
      byokRequired: true,
    },
    upstreamUrl: 'http://127.0.0.1:5001/',
    extraKeys: ['vk_from_environment'],
  };
  const config = runtimeConfigFromDocument(document, local);
  t.equal(config.version, 'cp-7');
  t.equal(config.workspaceId, 'ws_1');
  t.ok(config.keys.has(hashKey('vk_workspace_key_1')), 'the workspace key');
  t.ok(config.keys.has(hashKey('vk_local_machine_key')), "the machine's own key");
  t.ok(config.keys.has(hashKey('vk_from_environment')), 'a key from the environment');
  t.same(config.providers.openai, { apiKey: 'sk-workspace-key' }, "the workspace's credential wins");
  t.same(config.providers.anthropic, { apiKey: 'sk-ant-local-key' }, 'a local-only credential stays');
  t.same(config.settings, document.config.settings);
  t.equal(config.caps.dailyUsd, 25);
  t.equal(config.limits.maxBodyBytes, 4096);
  t.same(config.piiDetectors, { 'pii.card': 'block' });
  t.same(config.egress, { mode: 'monitor', allow: ['example.com'] });
  t.equal(config.byokRequired, true, 'either side can require bring-your-own-key');
  t.equal(config.upstreamUrl, 'http://127.0.0.1:5001');
});

t.test('the last good config: saved 0600 and read back; a damaged file reads as none', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-last-good-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = new LastGoodConfig(join(dir, 'sync', 'last-good.json'));
  t.equal(await store.load(), undefined);
  await store.save(document);
  t.equal((await stat(store.file)).mode & 0o777, 0o600);
  const loaded = await store.load();
  t.same(loaded?.document, document);
  t.match(loaded?.savedAt, /^\d{4}-/);
  const saved = JSON.parse(await readFile(store.file, 'utf8'));
  await writeFile(store.file, JSON.stringify({ ...saved, document: { ...saved.document, version: 'seven' } }));
  t.equal(await store.load(), undefined, 'a document that no longer validates');
  await writeFile(store.file, '{ not json');
  t.equal(await store.load(), undefined);
});
