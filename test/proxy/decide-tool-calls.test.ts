import t from 'tap';
import OpenAI from 'openai';
import { startMockProvider } from '../../bench/mock/provider.js';
import { buildEngineConfig } from '../../src/decide/engine-config.js';
import { DecideRuntime } from '../../src/decide/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { startProxy } from '../helpers/proxy.js';
import { DROP_TABLE_RECORD, MODEL, pinFor, rule, startModel, tempDir } from '../helpers/decide.js';

const VK = 'vk_test_agent_000001';
const DROP = rule(DROP_TABLE_RECORD);
const chatTools = [{ type: 'function' as const, function: { name: 'bash', description: 'Run a shell command', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }];
const toolArgs = (command: string) => ({ headers: { 'x-mock-tool-args': JSON.stringify({ command }) } });

t.test('a tool call a decide rule refuses is substituted; an allowed one reaches the agent', async (t) => {
  const model = await startModel(t);
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const decide = new DecideRuntime({ engine: buildEngineConfig({ url: model.url, model: MODEL }, {}), loaded: { rules: [DROP], unreadable: [], sopTexts: [] }, pins: pinFor(DROP, MODEL), env: {}, logger: createLogger('silent') });
  const proxy = await startProxy(t, { upstreamUrl: mock.url, env: { SVC_WASM_DIR: await tempDir(t) }, file: { keys: [{ key: VK }] }, decide });
  const openai = new OpenAI({ apiKey: VK, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  model.setAnswers([{ match: 'DROP TABLE', pYes: 0.97 }]);

  const blocked = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'clean up' }], tools: chatTools }, toolArgs('psql -c "DROP TABLE users"')).withResponse();
  const message = blocked.data.choices[0]!.message;
  t.equal(message.tool_calls, undefined, 'the refused call is gone');
  t.match(message.content, /BLOCKED: .*DECIDE_REFUSED: decide rule 'no-prod-drop'/);
  t.equal(blocked.response.headers.get('x-svc-enforcement'), 'HIJACK');

  const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }], tools: chatTools }, toolArgs('psql -c "DROP TABLE orders"'));
  let text = '';
  let calls = 0;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    calls += chunk.choices[0]?.delta?.tool_calls?.length ?? 0;
  }
  t.equal(calls, 0, 'streamed: no tool call reaches the agent');
  t.match(text, /DECIDE_REFUSED/);

  const allowed = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'list' }], tools: chatTools }, toolArgs('ls -la'));
  t.equal(allowed.choices[0]!.message.tool_calls?.length, 1);
});
