import t from 'tap';
import { buildRuntimeConfig } from '../../src/config/runtime.js';
import { ModelCatalog } from '../../src/upstream/catalog.js';
import { resolveModel } from '../../src/upstream/resolve.js';
import { buildTarget } from '../../src/upstream/target.js';
import { SvcError } from '../../src/lib/errors.js';

const catalog = ModelCatalog.load();
const noEnv = {};

t.test('an upstream URL takes every provider\'s traffic under /v1', async (t) => {
  const config = buildRuntimeConfig({ upstreamUrl: 'http://127.0.0.1:9999/gw/' });
  const target = buildTarget(config, resolveModel('claude-sonnet-4', catalog), 'anthropic', '/messages', 'sk-ant-agent', noEnv);
  t.equal(target.origin, 'http://127.0.0.1:9999');
  t.equal(target.path, '/gw/v1/messages');
  t.same(target.authHeaders, [['x-api-key', 'sk-ant-agent']], 'the agent\'s own key passes through in the wire\'s header');
});

t.test('the platform key wins over the agent\'s key: config first, then the env variable', async (t) => {
  const fromEnv = buildTarget(buildRuntimeConfig({}), resolveModel('gpt-4o', catalog), 'openai', '/chat/completions', 'sk-agent', {
    OPENAI_API_KEY: 'sk-platform-env',
  });
  t.equal(fromEnv.origin, 'https://api.openai.com');
  t.equal(fromEnv.path, '/v1/chat/completions');
  t.same(fromEnv.authHeaders, [['authorization', 'Bearer sk-platform-env']]);
  const fromConfig = buildTarget(
    buildRuntimeConfig({ file: { providers: { openai: { apiKey: 'sk-from-config' } } } }),
    resolveModel('gpt-4o', catalog),
    'openai',
    '/chat/completions',
    'sk-agent',
    { OPENAI_API_KEY: 'sk-platform-env' },
  );
  t.same(fromConfig.authHeaders, [['authorization', 'Bearer sk-from-config']]);
});

t.test('OpenAI-compatible key-only providers use their own base URLs', async (t) => {
  const config = buildRuntimeConfig({});
  const groq = buildTarget(config, resolveModel('llama-3.3-70b-versatile', catalog), 'openai', '/chat/completions', undefined, noEnv);
  t.equal(groq.origin + groq.path, 'https://api.groq.com/openai/v1/chat/completions');
  t.same(groq.authHeaders, [], 'no key anywhere: nothing is invented');
  const gemini = buildTarget(config, resolveModel('gemini-2.5-pro', catalog), 'openai', '/chat/completions', 'k', noEnv);
  t.equal(gemini.origin + gemini.path, 'https://generativelanguage.googleapis.com/v1beta/openai/chat/completions');
});

t.test('azure_openai: tenant endpoint, deployment path, api-version and api-key header', async (t) => {
  const config = buildRuntimeConfig({
    file: { providers: { azure_openai: { endpoint: 'https://acme.openai.azure.com/', apiKey: 'azure-key-123', apiVersion: '2024-10-21' } } },
  });
  const target = buildTarget(config, resolveModel('azure/gpt-4o', catalog), 'openai', '/chat/completions', undefined, noEnv);
  t.equal(target.origin, 'https://acme.openai.azure.com');
  t.equal(target.path, '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21');
  t.same(target.authHeaders, [['api-key', 'azure-key-123']]);
  const unconfigured = t.throws(() =>
    buildTarget(buildRuntimeConfig({}), resolveModel('azure_openai/gpt-4o', catalog), 'openai', '/chat/completions', undefined, noEnv),
  ) as unknown as SvcError;
  t.equal(unconfigured.code, 'provider_not_configured');
});

t.test('ollama: apiBase with /v1 appended once, no key needed', async (t) => {
  const config = buildRuntimeConfig({ file: { providers: { ollama: { apiBase: 'http://127.0.0.1:11500' } } } });
  const target = buildTarget(config, resolveModel('ollama/qwen3:8b', catalog), 'openai', '/chat/completions', undefined, noEnv);
  t.equal(target.origin + target.path, 'http://127.0.0.1:11500/v1/chat/completions');
  t.same(target.authHeaders, []);
});

t.test('the Anthropic Messages route refuses a provider that does not serve it', async (t) => {
  const err = t.throws(() =>
    buildTarget(buildRuntimeConfig({}), resolveModel('gpt-4o', catalog), 'anthropic', '/messages', undefined, noEnv),
  ) as unknown as SvcError;
  t.equal(err.status, 501);
  t.equal(err.code, 'provider_not_supported');
});
