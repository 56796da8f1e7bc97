import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';
import { compileRules, svc } from '../helpers/wasm.js';
import { countingParses } from '../helpers/json-parses.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const VK = 'vk_test_agent_000001';
const rules = await compileRules(t, ['destructive-shell', 'latest-image', 'force-push', 'no-drop-database', 'response-guard']);
const wasmDir = await mkdtemp(join(tmpdir(), 'svc-wasm-dir-'));
t.teardown(() => rm(wasmDir, { recursive: true, force: true }));
const env = { SVC_WASM_DIR: wasmDir };
for (const [name, priority] of [['destructive-shell', 10], ['latest-image', 20], ['force-push', 30], ['no-drop-database', 40], ['response-guard', 50]] as const) {
  const installed = await svc(['policy', 'install', '--wasm', rules[name], '--name', name, '--priority', String(priority)], env);
  if (installed.code !== 0) throw new Error(installed.stderr);
}

const mock = await startMockProvider();
t.teardown(() => mock.close());
const proxy = await startProxy(t, { upstreamUrl: mock.url, env, file: { keys: [{ key: VK, name: 'agent' }] } });
const openai = new OpenAI({ apiKey: VK, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: VK, baseURL: proxy.url, maxRetries: 0 });

const bashParameters = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };
const chatTools = [{ type: 'function' as const, function: { name: 'bash', description: 'Run a shell command', parameters: bashParameters } }];
const anthropicTools = [{ name: 'bash', description: 'Run a shell command', input_schema: bashParameters as Anthropic.Tool.InputSchema }];
const responsesTools = [{ type: 'function' as const, name: 'bash', description: 'Run a shell command', parameters: bashParameters, strict: false }];

/** The mock calls the first offered tool with these arguments. */
const toolArgs = (command: string) => ({ headers: { 'x-mock-tool-args': JSON.stringify({ command }) } });

const BLOCK = 'sudo rm -rf /';
const HOLD = 'git push --force origin main';
const ALLOW = 'ls -la';

function lastTrace() {
  return proxy.sink.recent().at(-1)!;
}

t.test('chat, not streamed: blocked, held and allowed tool calls', async (t) => {
  const blocked = await openai.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'clean up' }], tools: chatTools }, toolArgs(BLOCK))
    .withResponse();
  const message = blocked.data.choices[0]!.message;
  t.equal(message.tool_calls, undefined, 'the blocked call is gone');
  t.match(message.content, /^\[Svc Governance\] BLOCKED: the bash tool call was blocked by rule destructive-shell: destructive shell command/);
  t.equal(blocked.data.choices[0]!.finish_reason, 'stop');
  t.equal(blocked.response.headers.get('x-svc-enforcement'), 'HIJACK');
  t.match(lastTrace(), {
    enforcement: 'HIJACK',
    toolCalls: [{ name: 'bash', action: 'block', rule: 'destructive-shell', source: 'wasm', substituted: true }],
  });
  t.match(lastTrace().toolCalls[0]!.id, /^call_/, 'the trace keeps the call id');
  t.notMatch(JSON.stringify(lastTrace()), /rm -rf/, 'the trace keeps no arguments');

  const held = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ship it' }], tools: chatTools }, toolArgs(HOLD));
  t.match(held.choices[0]!.message.content, /^\[Svc Governance\] HELD: the bash tool call awaits a person's approval \(rule force-push: force push to protected branch main/);
  t.equal(held.choices[0]!.message.tool_calls, undefined);
  t.match(lastTrace().toolCalls, [{ action: 'hold', rule: 'force-push' }]);

  const allowed = await openai.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'look' }], tools: chatTools }, toolArgs(ALLOW))
    .withResponse();
  const call = allowed.data.choices[0]!.message.tool_calls![0]!;
  t.equal(call.type === 'function' && call.function.arguments, JSON.stringify({ command: ALLOW }));
  t.equal(allowed.data.choices[0]!.finish_reason, 'tool_calls');
  t.equal(allowed.response.headers.get('x-svc-enforcement'), 'BYPASS');
  t.same(lastTrace().toolCalls, []);
});

t.test('a complete response is parsed once on its way through the response policy, the tool-call review and the response rules', async (t) => {
  // Read as text, so the only parses are the proxy's.
  const { result: res, parses } = await countingParses(
    () =>
      fetch(`${proxy.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${VK}`, 'content-type': 'application/json', ...toolArgs(ALLOW).headers },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'look' }], tools: chatTools }),
      }),
    (text) => text.includes('"tool_calls"'),
  );
  const text = await res.text();
  t.equal(res.status, 200);
  t.match(text, /"tool_calls"/, 'the call went through');
  t.equal(res.headers.get('x-svc-enforcement'), 'BYPASS');
  t.equal(parses, 1, 'the reviews read the parse the response policy made');
});

t.test('chat, streamed: a tool call is held until complete, then replaced or released', async (t) => {
  const run = (command: string) =>
    openai.chat.completions
      .stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'go' }], tools: chatTools, stream: true }, toolArgs(command))
      .finalChatCompletion();
  const blocked = await run(BLOCK);
  t.equal(blocked.choices[0]!.message.tool_calls?.length ?? 0, 0, 'no tool call reaches the agent');
  t.match(blocked.choices[0]!.message.content, /^\[Svc Governance\] BLOCKED: .*rule destructive-shell/);
  t.equal(blocked.choices[0]!.finish_reason, 'stop');
  t.match(lastTrace(), { stream: true, enforcement: 'HIJACK', toolCalls: [{ action: 'block', rule: 'destructive-shell' }] });

  const held = await run('kubectl set image deploy/api api=acme/api:latest && git push -f origin main');
  t.match(held.choices[0]!.message.content, /BLOCKED: .*rule latest-image/, 'the lower priority number decides');

  const allowed = await run(ALLOW);
  const call = allowed.choices[0]!.message.tool_calls![0]!;
  t.equal(call.type === 'function' && call.function.arguments, JSON.stringify({ command: ALLOW }), 'the arguments arrive whole');
  t.equal(allowed.choices[0]!.finish_reason, 'tool_calls');
  t.equal(lastTrace().enforcement, 'BYPASS');
});

t.test('anthropic messages, streamed and not', async (t) => {
  const blocked = await anthropic.messages.create(
    { model: 'claude-sonnet-4', max_tokens: 256, messages: [{ role: 'user', content: 'clean' }], tools: anthropicTools },
    toolArgs(BLOCK),
  );
  t.same(blocked.content.map((b) => b.type), ['text']);
  t.match(blocked.content[0]!.type === 'text' && blocked.content[0].text, /^\[Svc Governance\] BLOCKED: .*destructive-shell/);
  t.equal(blocked.stop_reason, 'end_turn');
  t.match(lastTrace(), { enforcement: 'HIJACK', toolCalls: [{ action: 'block' }] });

  const held = await anthropic.messages
    .stream({ model: 'claude-sonnet-4', max_tokens: 256, messages: [{ role: 'user', content: 'push' }], tools: anthropicTools }, toolArgs(HOLD))
    .finalMessage();
  t.same(held.content.map((b) => b.type), ['text']);
  t.match(held.content[0]!.type === 'text' && held.content[0].text, /^\[Svc Governance\] HELD: .*force-push/);
  t.equal(held.stop_reason, 'end_turn');
  t.match(lastTrace(), { stream: true, enforcement: 'HIJACK', toolCalls: [{ action: 'hold', rule: 'force-push' }] });

  const allowed = await anthropic.messages
    .stream({ model: 'claude-sonnet-4', max_tokens: 256, messages: [{ role: 'user', content: 'look' }], tools: anthropicTools }, toolArgs(ALLOW))
    .finalMessage();
  t.match(allowed.content, [{ type: 'tool_use', name: 'bash', input: { command: ALLOW } }]);
  t.equal(allowed.stop_reason, 'tool_use');
});

t.test('responses API, streamed and not', async (t) => {
  const blocked = await openai.responses.create({ model: 'gpt-4o-mini', input: 'clean', tools: responsesTools }, toolArgs(BLOCK));
  t.same(blocked.output.map((o) => o.type), ['message']);
  t.match(blocked.output_text, /^\[Svc Governance\] BLOCKED: .*destructive-shell/);
  t.match(lastTrace(), { enforcement: 'HIJACK' });

  const held = await openai.responses.stream({ model: 'gpt-4o-mini', input: 'push', tools: responsesTools }, toolArgs(HOLD)).finalResponse();
  t.match(held.output, [{ type: 'message', content: [{ type: 'output_text', text: /^\[Svc Governance\] HELD: .*force-push/ }] }]);
  t.equal(held.output.length, 1);
  t.match(lastTrace(), { stream: true, toolCalls: [{ action: 'hold' }] });

  const allowed = await openai.responses.stream({ model: 'gpt-4o-mini', input: 'look', tools: responsesTools }, toolArgs(ALLOW)).finalResponse();
  t.match(allowed.output, [{ type: 'function_call', name: 'bash', arguments: JSON.stringify({ command: ALLOW }) }]);
});

t.test('a request a rule refuses gets 403 policy_denied naming the rule', async (t) => {
  const err = await openai.chat.completions
    .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'now DROP DATABASE prod' }] })
    .then(() => null, (e: unknown) => e);
  t.ok(err instanceof OpenAI.PermissionDeniedError);
  const e = err as InstanceType<typeof OpenAI.PermissionDeniedError>;
  t.equal(e.status, 403);
  t.equal(e.code, 'policy_denied');
  t.match(e.message, /\[Svc Governance\] BLOCKED: rule no-drop-database refused this request: dropping a database is not allowed/);
  t.match(e.error, { trace_id: lastTrace().id }, 'the refusal carries the trace id');
  t.match(lastTrace(), { status: 403, enforcement: 'KILL', error: 'policy_denied', requestRule: { rule: 'no-drop-database', action: 'block' } });
  const before = mock.requests.length;
  await t.rejects(
    anthropic.messages.create({ model: 'claude-sonnet-4', max_tokens: 16, messages: [{ role: 'user', content: 'drop database x' }] }),
    { status: 403, error: { type: 'error', error: { type: 'permission_error' } } },
  );
  t.equal(mock.requests.length, before, 'nothing went upstream');
});

t.test('a response a rule refuses is withheld, in the route\'s shape', async (t) => {
  const secret = { headers: { 'x-mock-content': encodeURIComponent('Here are the TOP SECRET plans') } };
  const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'plans?' }] }, secret);
  t.equal(chat.choices[0]!.message.content, '[Svc Governance] BLOCKED: rule response-guard withheld this response: the answer quotes a classified document');
  t.match(lastTrace(), { enforcement: 'KILL', responseRule: { rule: 'response-guard', action: 'block', withheld: true } });
  const message = await anthropic.messages.create({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: 'plans?' }] }, secret);
  t.match(message.content, [{ type: 'text', text: /^\[Svc Governance\] BLOCKED: rule response-guard/ }]);
  const fine = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  t.match(fine.choices[0]!.message.content, /mock provider/);
  t.equal(lastTrace().responseRule, null);
});

t.test('a tool call made again gets the verdict the rules reached on it, from their memory, counted in /health', async (t) => {
  const remembered = async () => ((await (await fetch(`${proxy.url}/health`)).json()) as { wasm: { runner: { remembered: number } } }).wasm.runner.remembered;
  const ask = () => openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'tidy' }], tools: chatTools }, toolArgs('cd / && sudo rm -rf /'));
  const first = await ask();
  const before = await remembered();
  const again = await ask();
  t.match(again.choices[0]!.message.content, /^\[Svc Governance\] BLOCKED: the bash tool call was blocked by rule destructive-shell/);
  t.equal(again.choices[0]!.message.content, first.choices[0]!.message.content, 'the same block, word for word');
  t.match(lastTrace().toolCalls, [{ action: 'block', rule: 'destructive-shell', source: 'wasm' }]);
  const now = await remembered();
  t.ok(now > before, 'answered from what the rule remembered');
  const metrics = await (await fetch(`${proxy.url}/metrics`)).text();
  t.match(metrics, new RegExp(`^svc_wasm_verdicts_remembered ${now}$`, 'm'), 'and so does /metrics');
});

t.test('/health lists the loaded rules', async (t) => {
  const health = (await (await fetch(`${proxy.url}/health`)).json()) as { wasm: { rules: Array<{ name: string; priority: number }>; failed: unknown[] } };
  t.same(
    health.wasm.rules.map((r) => [r.priority, r.name]),
    [[10, 'destructive-shell'], [20, 'latest-image'], [30, 'force-push'], [40, 'no-drop-database'], [50, 'response-guard']],
  );
  t.same(health.wasm.failed, []);
});

t.test('under ff_shadow_enforcement the rules are evaluated and recorded, nothing is changed', async (t) => {
  const shadow = await startProxy(t, {
    upstreamUrl: mock.url,
    env,
    file: { keys: [{ key: VK, name: 'agent' }], settings: { featureFlags: { ff_shadow_enforcement: true } } },
  });
  const client = new OpenAI({ apiKey: VK, baseURL: `${shadow.url}/v1`, maxRetries: 0 });
  const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }], tools: chatTools }, toolArgs(BLOCK));
  t.equal(res.choices[0]!.message.tool_calls?.length, 1, 'the call reaches the agent');
  t.match(shadow.sink.recent().at(-1), { shadow: true, enforcement: 'BYPASS', toolCalls: [{ rule: 'destructive-shell', action: 'block', substituted: false }] });
  const request = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'DROP DATABASE prod' }] });
  t.ok(request.choices[0]!.message.content, 'the request was not refused');
  t.match(shadow.sink.recent().at(-1), { shadow: true, status: 200, requestRule: { rule: 'no-drop-database', action: 'block' } });
});
