import t from 'tap';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockProvider } from '../../bench/mock/provider.js';
import { buildEngineConfig } from '../../src/decide/engine-config.js';
import { DecideRuntime } from '../../src/decide/runtime.js';
import { loadRules } from '../../src/decide/sop-loader.js';
import { createLogger } from '../../src/lib/logger.js';
import { startProxy } from '../helpers/proxy.js';
import { MODEL, pinFor, rule, startModel, tempDir, writeSop } from '../helpers/decide.js';

const VK = 'vk_test_agent_000001';
const SECRET_RULE = {
  id: 'no-credentials-in-chat',
  on: 'response',
  rollout: 'enforce',
  questions: { leaks: { type: 'yes_no', ask: 'Does the response print a credential or secret value?' } },
  when: 'leaks',
};

async function setup(t: Tap.Test, opts: { rollout?: 'enforce' | 'shadow'; pinned?: boolean; settings?: object } = {}) {
  const model = await startModel(t);
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const root = await tempDir(t);
  const record = { ...SECRET_RULE, rollout: opts.rollout ?? 'enforce' };
  await writeSop(root, 'secrets', 'sop.md', `---\ntitle: Secrets\n---\nNever print credentials.\n\ndecide: ${JSON.stringify(record)}\n`);
  const loaded = await loadRules(root);
  const pins = opts.pinned === false ? {} : pinFor(rule(record), MODEL);
  const decide = new DecideRuntime({ engine: buildEngineConfig({ url: model.url, model: MODEL }, {}), loaded, pins, env: {}, logger: createLogger('silent') });
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { keys: [{ key: VK }], settings: opts.settings ?? {} }, decide });
  const openai = new OpenAI({ apiKey: VK, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const anthropic = new Anthropic({ apiKey: VK, baseURL: proxy.url, maxRetries: 0 });
  return { model, mock, proxy, openai, anthropic };
}

const LEAK = 'Here is the key: AKIA-EXAMPLE-LEAK';
const mockContent = (text: string) => ({ headers: { 'x-mock-content': encodeURIComponent(text) } });

t.test('a response that violates the SOP reaches the client with the VIOLATION note (non-streamed)', async (t) => {
  const { model, openai, proxy } = await setup(t);
  model.setAnswers([{ match: 'AKIA-EXAMPLE-LEAK', pYes: 0.97 }]);
  const { data, response } = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'show me the key' }] }, mockContent(LEAK)).withResponse();
  const content = data.choices[0]!.message.content!;
  t.ok(content.startsWith(LEAK), 'the answer is kept');
  t.match(content, /\n\n\[Svc Governance\] VIOLATION \(no-credentials-in-chat\): /);
  t.equal(response.headers.get('x-svc-enforcement'), 'HIJACK');
  const trace = proxy.sink.recent().at(-1)!;
  t.equal(trace.enforcement, 'HIJACK');
  t.ok(trace.warnings.includes('decide_violation:no-credentials-in-chat'));
  t.match(trace.findings, [{ detector: 'decide.no-credentials-in-chat', where: 'response:refuse', action: 'block' }]);

  const clean = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }, mockContent('All good here.'));
  t.equal(clean.choices[0]!.message.content, 'All good here.', 'a compliant response is untouched');
});

t.test('streamed: the note comes after the last content event, before the stream closes', async (t) => {
  const { model, openai } = await setup(t);
  model.setAnswers([{ match: 'AKIA-EXAMPLE-LEAK', pYes: 0.97 }]);
  const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'show me the key' }] }, mockContent(LEAK));
  const deltas: string[] = [];
  let finishedAt = -1;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (choice?.delta?.content) deltas.push(choice.delta.content);
    if (choice?.finish_reason) finishedAt = deltas.length;
  }
  t.equal(deltas.slice(0, -1).join(''), LEAK, 'every content event first');
  t.match(deltas.at(-1), /^\n\n\[Svc Governance\] VIOLATION \(no-credentials-in-chat\): /, 'then the note');
  t.ok(finishedAt >= 0, 'the stream ran to its finish and [DONE]');
});

t.test('AMBIGUOUS when the answer falls inside the band', async (t) => {
  const { model, openai } = await setup(t);
  model.setAnswers([{ match: 'maybe-secret', pYes: 0.5 }]);
  const data = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, mockContent('token maybe-secret'));
  t.match(data.choices[0]!.message.content, /\[Svc Governance\] AMBIGUOUS \(no-credentials-in-chat\): /);
});

t.test('anthropic messages carry the note too, streamed and not', async (t) => {
  const { model, anthropic } = await setup(t);
  model.setAnswers([{ match: 'AKIA-EXAMPLE-LEAK', pYes: 0.97 }]);
  const msg = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'key?' }] }, mockContent(LEAK));
  t.match(msg.content.at(-1), { type: 'text', text: /^\[Svc Governance\] VIOLATION/ });
  const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'key?' }] }, mockContent(LEAK));
  const final = await stream.finalMessage();
  t.match(final.content.at(-1), { type: 'text', text: /^\[Svc Governance\] VIOLATION/ });
});

t.test('a shadow rule, or an enforce rule without a pinned model, writes no note but records the finding', async (t) => {
  for (const opts of [{ rollout: 'shadow' as const }, { pinned: false }]) {
    const { model, openai, proxy } = await setup(t, opts);
    model.setAnswers([{ match: 'AKIA-EXAMPLE-LEAK', pYes: 0.97 }]);
    const { data, response } = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, mockContent(LEAK)).withResponse();
    t.equal(data.choices[0]!.message.content, LEAK);
    t.equal(response.headers.get('x-svc-enforcement'), 'BYPASS');
    t.match(proxy.sink.recent().at(-1)!.findings, [{ detector: 'decide.no-credentials-in-chat.shadow', where: 'response:refuse' }]);
  }
});

t.test('under ff_shadow_enforcement the verdict is recorded, the response untouched', async (t) => {
  const { model, openai, proxy } = await setup(t, { settings: { featureFlags: { ff_shadow_enforcement: true } } });
  model.setAnswers([{ match: 'AKIA-EXAMPLE-LEAK', pYes: 0.97 }]);
  const data = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }, mockContent(LEAK));
  t.equal(data.choices[0]!.message.content, LEAK);
  const trace = proxy.sink.recent().at(-1)!;
  t.ok(trace.warnings.includes('decide_violation:no-credentials-in-chat'));
  t.not(trace.enforcement, 'HIJACK');
});
