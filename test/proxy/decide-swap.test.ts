import t from 'tap';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { request } from 'undici';
import { buildRuntimeConfig } from '../../src/config/runtime.js';
import { buildEngineConfig } from '../../src/decide/engine-config.js';
import { DecideRuntime } from '../../src/decide/runtime.js';
import { loadRules } from '../../src/decide/sop-loader.js';
import { createLogger } from '../../src/lib/logger.js';
import { DROP_TABLE_RECORD, MODEL, pinFor, rule, startModel, tempDir } from '../helpers/decide.js';
import { startProxy } from '../helpers/proxy.js';
import { until } from '../helpers/until.js';

const VK = 'vk_test_agent_000001';
const DROP = DROP_TABLE_RECORD;
const COMMAND = 'psql -c "DROP TABLE users"';

/** An upstream that answers every chat with a bash tool call, holding the ones that say HOLD until released. */
async function gatedUpstream(t: Tap.Test) {
  const held: Array<() => void> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 1,
            model: 'gpt-4o-mini',
            choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: COMMAND }) } }] } }],
            usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
          }),
        );
      };
      if (body.includes('HOLD')) held.push(answer);
      else answer();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const answer of held.splice(0)) answer();
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, held, release: () => held.splice(0).forEach((answer) => answer()) };
}

t.test('a config with other decide rules gets a new runtime; running requests keep theirs and the old one closes after them', async (t) => {
  const model = await startModel(t);
  model.setAnswers([{ match: 'DROP TABLE', pYes: 0.97 }]);
  const upstream = await gatedUpstream(t);
  const root = await tempDir(t);
  const built: DecideRuntime[] = [];
  const closed = new Set<DecideRuntime>();
  const load = async (records: readonly unknown[]) => {
    const runtime = new DecideRuntime({
      engine: buildEngineConfig({ url: model.url, model: MODEL }, {}),
      loaded: await loadRules(root, records),
      pins: pinFor(rule(DROP), MODEL),
      env: {},
      logger: createLogger('silent'),
    });
    const close = runtime.close.bind(runtime);
    runtime.close = async () => {
      closed.add(runtime);
      await close();
    };
    built.push(runtime);
    return runtime;
  };
  const configWith = (decideRules: unknown[], extraKeys: string[] = []) =>
    buildRuntimeConfig({ file: { keys: [{ key: VK }], decide_rules: decideRules }, upstreamUrl: upstream.url, extraKeys });
  const first = await load([]);
  const proxy = await startProxy(t, { upstreamUrl: upstream.url, file: { keys: [{ key: VK }] }, env: { SVC_WASM_DIR: await tempDir(t) }, decide: first, loadDecide: load });

  const chat = async (content: string) => {
    const res = await request(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${VK}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }] }),
    });
    const body = (await res.body.json()) as { choices: Array<{ message: { content: string | null; tool_calls?: unknown[] } }> };
    return { called: (body.choices[0]!.message.tool_calls?.length ?? 0) > 0, content: body.choices[0]!.message.content ?? '' };
  };

  const running = chat('HOLD this one');
  await until('the held request to reach the upstream', () => (upstream.held.length === 1 ? true : undefined));
  await proxy.server.setConfig(configWith([DROP]));
  t.equal(built.length, 2, 'a runtime for the new rules');
  t.notOk(closed.has(first), 'the old runtime stays open while a request holds it');

  const refused = await chat('a new request');
  t.notOk(refused.called, 'a new request is judged by the new rules');
  t.match(refused.content, /DECIDE_REFUSED: decide rule 'no-prod-drop'/);

  upstream.release();
  t.ok((await running).called, 'the request that started before the change keeps the rules it started with');
  await until('the old runtime to close', () => (closed.has(first) ? true : undefined));

  await proxy.server.setConfig(configWith([DROP], ['vk_another_key_0001']));
  t.equal(built.length, 2, 'a config with the same decide rules keeps the runtime in force');
  t.notOk((await chat('again')).called);

  await proxy.server.setConfig(configWith([]));
  t.equal(built.length, 3);
  t.ok((await chat('rules gone')).called, 'without the rule the call reaches the agent');
  await until('the second runtime to close', () => (closed.has(built[1]!) ? true : undefined));
});
