import t from 'tap';
import OpenAI from 'openai';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';

async function setup(t: Tap.Test, file: Record<string, unknown>) {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file });
  const openai = new OpenAI({ apiKey: 'sk-agent', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const call = (model = 'gpt-4o') =>
    openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => null,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );
  return { mock, proxy, call };
}

t.test('allowedModels: 403 model_not_allowed; the id as sent, without its prefix, or its catalog family', async (t) => {
  const { call, proxy, mock } = await setup(t, { settings: { allowedModels: ['gpt-4o', 'claude-sonnet-4'] } });
  const before = mock.requests.length;
  const err = await call('gpt-4o-mini');
  t.type(err, OpenAI.PermissionDeniedError);
  t.equal(err?.code, 'model_not_allowed');
  t.equal(err?.param, 'model');
  t.equal(mock.requests.length, before, 'nothing sent');
  t.match(proxy.sink.recent().at(-1), { status: 403, enforcement: 'KILL', error: 'model_not_allowed' });
  t.equal(await call('gpt-4o'), null);
  t.equal(await call('openai/gpt-4o'), null, 'a provider prefix does not change the model');
  t.equal(await call('claude-sonnet-4-20250514'), null, 'a dated snapshot of an allowed model');
});

t.test('byok: 402 byok_required when enforcement is on and no credential is provisioned', async (t) => {
  const off = await setup(t, {});
  t.equal(await off.call(), null, 'enforcement off: the agent\'s key passes through');
  const on = await setup(t, { byokRequired: true });
  const err = await on.call();
  t.equal(err?.status, 402);
  t.equal(err?.code, 'byok_required');
  const provisioned = await setup(t, { byokRequired: true, providers: { openai: { apiKey: 'sk-workspace-key-1' } } });
  t.equal(await provisioned.call(), null);
  t.equal(provisioned.mock.requests.at(-1)!.headers.authorization, 'Bearer sk-workspace-key-1');
});

t.test('egress: enforce refuses a host off the list, monitor records it, off ignores it', async (t) => {
  const enforce = await setup(t, { settings: { egressMode: 'enforce', egressAllow: ['.openai.com'] } });
  const before = enforce.mock.requests.length;
  const err = await enforce.call();
  t.equal(err?.status, 403);
  t.equal(err?.code, 'egress_denied');
  t.match(err?.message, /127\.0\.0\.1/);
  t.equal(enforce.mock.requests.length, before);

  const cidr = await setup(t, { settings: { egressMode: 'enforce', egressAllow: ['127.0.0.0/8'] } });
  t.equal(await cidr.call(), null, 'a CIDR covers the IP literal host');
  const local = await setup(t, { egress: { mode: 'enforce', allow: ['127.0.0.1'] } });
  t.equal(await local.call(), null, 'the machine\'s own list');

  const monitor = await setup(t, { settings: { egressMode: 'monitor', egressAllow: ['api.openai.com'] } });
  t.equal(await monitor.call(), null);
  t.match(monitor.proxy.sink.recent().at(-1)!.warnings, ['egress_unlisted:127.0.0.1']);

  const off = await setup(t, { settings: { egressMode: 'off', egressAllow: [] } });
  t.equal(await off.call(), null);
  t.same(off.proxy.sink.recent().at(-1)!.warnings, []);
});
