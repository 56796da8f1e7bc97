import t from 'tap';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildEngineConfig, isSelfHosted, readEngineConfig } from '../../src/decide/engine-config.js';
import { pYesFromCompletion } from '../../src/decide/model-client.js';
import { ConfigError } from '../../src/lib/errors.js';
import { tempDir } from '../helpers/decide.js';

t.test('engine.json read at start, each field overridden by its SVC_DECIDE_* variable', async (t) => {
  const home = await tempDir(t);
  t.match(await readEngineConfig({ SVC_HOME: home }), { url: null, model: null, band: { yesAt: 0.8, noBelow: 0.2 }, timeoutMs: 2000, cacheTtlMs: 60000 }, 'no file: defaults, not configured');
  await mkdir(join(home, 'decide'));
  await writeFile(join(home, 'decide', 'engine.json'), JSON.stringify({ url: 'http://127.0.0.1:8000/v1/', model: 'judge@v1', yes_at: 0.9, no_below: 0.1 }));
  const config = await readEngineConfig({ SVC_HOME: home, SVC_DECIDE_MODEL: 'judge@v2', SVC_DECIDE_TIMEOUT_MS: '500', SVC_DECIDE_NO_BELOW: '0.3' });
  t.match(config, { url: 'http://127.0.0.1:8000/v1', model: 'judge@v2', timeoutMs: 500, band: { yesAt: 0.9, noBelow: 0.3 } });
  await writeFile(join(home, 'decide', 'engine.json'), '{"url": ');
  await t.rejects(readEngineConfig({ SVC_HOME: home }), ConfigError);
});

t.test('invalid engine configs are refused with the field named', async (t) => {
  t.throws(() => buildEngineConfig({ yes_at: 0.5 }, {}), /yes_at must be above 0\.5/);
  t.throws(() => buildEngineConfig({ yes_at: 0.7, no_below: 0.8 }, {}), /no_below must be above 0 and at most yes_at/);
  t.throws(() => buildEngineConfig({ mode: 'enforce' }, {}), /Unrecognized key/);
  t.throws(() => buildEngineConfig({}, { SVC_DECIDE_TIMEOUT_MS: 'soon' }), /timeout_ms/);
  t.throws(() => buildEngineConfig({ url: 'ftp://x' }, {}), /url/);
});

t.test('self-hosted hosts versus hosted decision APIs', async (t) => {
  for (const url of ['http://127.0.0.1:8000/v1', 'http://localhost:11434/v1', 'http://[::1]:8000', 'http://10.2.3.4/v1', 'http://192.168.1.9', 'http://172.20.0.5', 'http://vllm:8000/v1', 'http://judge.internal', 'http://msrv.svc.cluster.local:4000']) {
    t.ok(isSelfHosted(url, []), url);
  }
  for (const url of ['https://api.openai.com/v1', 'https://api.anthropic.com', 'https://8.8.8.8/v1', 'https://judge.example.com/v1']) t.notOk(isSelfHosted(url, []), url);
  t.ok(isSelfHosted('https://judge.example.com/v1', ['judge.example.com']), 'an operator-listed host');
});

t.test('p(yes) from the first token: Yes/No variants summed and normalised; nothing usable is null', async (t) => {
  const completion = (top: Array<[string, number]> | null, first = 'Yes') => ({
    choices: [{ logprobs: { content: [{ token: first, logprob: Math.log(0.5), top_logprobs: top?.map(([token, p]) => ({ token, logprob: Math.log(p) })) }] } }],
  });
  t.ok(Math.abs(pYesFromCompletion(completion([['Yes', 0.6], ['No', 0.2], ['Maybe', 0.2]]))! - 0.75) < 1e-12);
  t.ok(Math.abs(pYesFromCompletion(completion([['ĠYes', 0.3], [' yes', 0.2], ['YES.', 0.1], ['No', 0.3], ['▁no', 0.1]]))! - 0.6) < 1e-12);
  t.equal(pYesFromCompletion(completion(null, 'No')), 0, 'no top list: the sampled token alone');
  t.equal(pYesFromCompletion(completion([['Maybe', 0.9], ['Perhaps', 0.1]])), null);
  t.equal(pYesFromCompletion({ choices: [{ logprobs: null }] }), null);
  t.equal(pYesFromCompletion({ choices: [{ logprobs: { content: [] } }] }), null);
});
