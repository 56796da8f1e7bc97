import t from 'tap';
import { ModelCatalog, costUsd } from '../../src/upstream/catalog.js';
import { assertSupported, resolveModel } from '../../src/upstream/resolve.js';
import { PROVIDER_IDS, PROVIDERS, providerById } from '../../src/upstream/providers.js';
import { SvcError } from '../../src/lib/errors.js';

const catalog = ModelCatalog.load();

t.test('the registry holds the eleven providers of seed 001 with their credential classes', async (t) => {
  t.equal(PROVIDER_IDS.length, 11);
  const byClass = (c: string) => PROVIDER_IDS.filter((id) => PROVIDERS[id].credentialClass === c).length;
  t.equal(byClass('key_only'), 7);
  t.equal(byClass('tenant_endpoint'), 1);
  t.equal(byClass('cloud_region'), 1);
  t.equal(byClass('cloud_project'), 1);
  t.equal(byClass('local'), 1);
  t.equal(providerById('azure')?.id, 'azure_openai', 'short alias of a two-word cloud provider');
});

t.test('a provider/ prefix wins and is stripped for the upstream', async (t) => {
  const r = resolveModel('groq/llama-3.3-70b-versatile', catalog);
  t.equal(r.provider.id, 'groq');
  t.equal(r.upstreamModel, 'llama-3.3-70b-versatile');
  t.ok(r.entry, 'priced from the catalog');
  const unknown = resolveModel('ollama/qwen3-coder:30b', catalog);
  t.equal(unknown.provider.id, 'ollama');
  t.equal(unknown.entry, undefined, 'an unpriced model is still routable with a prefix');
});

t.test('a model id with its own slash is reached through its provider prefix', async (t) => {
  const r = resolveModel('groq/openai/gpt-oss-120b', catalog);
  t.equal(r.provider.id, 'groq');
  t.equal(r.upstreamModel, 'openai/gpt-oss-120b');
  t.throws(() => resolveModel('meta-llama/Llama-3-8b', catalog), 'an unknown prefix is not a provider');
});

t.test('catalog lookup, including dated snapshots', async (t) => {
  t.equal(resolveModel('gpt-4o-mini', catalog).provider.id, 'openai');
  const dated = resolveModel('claude-sonnet-4-20250514', catalog);
  t.equal(dated.provider.id, 'anthropic');
  t.equal(dated.entry?.id, 'claude-sonnet-4');
  t.equal(resolveModel('claude-sonnet-4-5-20250929', catalog).entry?.id, 'claude-sonnet-4-5', 'the longest matching id wins');
});

t.test('an unknown model is a 400 naming it', async (t) => {
  const err = t.throws(() => resolveModel('mystery-model', catalog)) as unknown as SvcError;
  t.equal(err.status, 400);
  t.equal(err.code, 'model_not_found');
  t.match(err.message, /mystery-model/);
});

t.test('bedrock and vertex answer 501 provider_not_supported', async (t) => {
  for (const id of ['aws_bedrock', 'google_vertex'] as const) {
    const err = t.throws(() => assertSupported(PROVIDERS[id])) as unknown as SvcError;
    t.equal(err.status, 501);
    t.equal(err.code, 'provider_not_supported');
  }
  t.doesNotThrow(() => assertSupported(PROVIDERS.openai));
});

t.test('cost at catalog prices', async (t) => {
  const entry = catalog.lookup('gpt-4o')!;
  t.equal(costUsd(entry, 1000, 1000), 0.0125);
});
