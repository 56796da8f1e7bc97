import t from 'tap';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startProxy } from '../helpers/proxy.js';
import { compileRules } from '../helpers/wasm.js';

// Codex code mode through a real proxy: the model asks for a command inside JavaScript handed to
// the freeform `exec` tool (a Responses `custom_tool_call`), and the WASM rules judge it like the
// plain call.

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const rules = await compileRules(t, ['destructive-shell', 'force-push']);
const wasmDir = await mkdtemp(join(tmpdir(), 'svc-code-mode-'));
t.teardown(() => rm(wasmDir, { recursive: true, force: true }));
await copyFile(rules['destructive-shell'], join(wasmDir, '10_destructive-shell.wasm'));
await copyFile(rules['force-push'], join(wasmDir, '30_force-push.wasm'));
const env = { SVC_WASM_DIR: wasmDir };

const PUSH = 'const r = await tools.exec_command({cmd: "git push --force origin main"});\ntext(r.output);';
const TOUCH = "const r = await tools.exec_command({cmd: 'touch ok.txt'});\ntext(r.output);";
const WIPE = 'await tools.exec_command({cmd: `rm -rf /`});';
const codeCall = (input: string) => ({ type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_exec', name: 'exec', input, status: 'completed' });

/** What the model answers, by the request's input. */
const ANSWERS: Record<string, Record<string, unknown>> = {
  push: codeCall(PUSH),
  touch: codeCall(TOUCH),
  wipe: codeCall(WIPE),
  teleport: { type: 'teleport_call', id: 'tp_1', call_id: 'call_tp', destination: 'mars', status: 'completed' },
};

const response = (output: unknown[], status: string) => ({ id: 'resp_1', object: 'response', created_at: 1, status, model: 'gpt-4o-mini', output, usage: { input_tokens: 5, output_tokens: 7, total_tokens: 12 } });

/** The events of a streamed answer, the code arriving in small pieces as a model writes it. */
function streamed(item: Record<string, unknown>): string[] {
  let sequence_number = 0;
  const ev = (type: string, fields: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence_number++, ...fields })}\n\n`;
  const out = [ev('response.created', { response: response([], 'in_progress') })];
  const at = { item_id: item.id, output_index: 0 };
  if (typeof item.input === 'string') {
    out.push(ev('response.output_item.added', { output_index: 0, item: { ...item, input: '', status: 'in_progress' } }));
    for (const piece of item.input.match(/[\s\S]{1,12}/g)!) out.push(ev('response.custom_tool_call_input.delta', { ...at, delta: piece }));
    out.push(ev('response.custom_tool_call_input.done', { ...at, input: item.input }));
  } else {
    out.push(ev('response.output_item.added', { output_index: 0, item }));
  }
  out.push(ev('response.output_item.done', { output_index: 0, item }));
  out.push(ev('response.completed', { response: response([item], 'completed') }));
  return out;
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
}

const upstream = createServer((req, res) => {
  void body(req).then((request) => {
    const item = ANSWERS[String(request.input)]!;
    if (request.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response([item], 'completed')));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of streamed(item)) res.write(event);
    res.end();
  });
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise((resolve) => upstream.close(resolve)));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

/** Codex's code-mode tool, as Codex 0.169 declares it (shortened). */
const EXEC_TOOL = { type: 'custom' as const, name: 'exec', description: 'Run JavaScript code to orchestrate/compose tool calls', format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: /[\\s\\S]+/' } };

/** The text of a response's message items (a streamed final response has no `output_text`). */
const textOf = (r: OpenAI.Responses.Response) =>
  r.output.flatMap((o) => (o.type === 'message' ? o.content : [])).map((c) => (c.type === 'output_text' ? c.text : '')).join('');

async function proxyWith(t: Tap.Test, failurePolicy: 'closed' | 'open') {
  const proxy = await startProxy(t, { upstreamUrl, env, file: { wasm: { failurePolicy } } });
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const ask = (input: string) => openai.responses.stream({ model: 'gpt-4o-mini', input, tools: [EXEC_TOOL] }).finalResponse();
  return { proxy, openai, ask, lastTrace: () => proxy.sink.recent().at(-1)! };
}

t.test('a force push asked for through code mode is held, streamed', async (t) => {
  const { proxy, ask, lastTrace } = await proxyWith(t, 'closed');
  const held = await ask('push');
  t.same(held.output.map((o) => o.type), ['message'], 'the exec call never reaches the agent');
  t.match(textOf(held), /^\[Svc Governance\] HELD: the exec tool call awaits a person's approval \(rule force-push: force push to protected branch main needs approval\)/);
  t.match(lastTrace(), { stream: true, enforcement: 'HIJACK', toolCalls: [{ id: 'call_exec', name: 'exec', action: 'hold', rule: 'force-push', source: 'wasm', substituted: true }] });

  const raw = await fetch(`${proxy.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', input: 'push', stream: true, tools: [EXEC_TOOL] }) });
  const text = await raw.text();
  t.notMatch(text, /custom_tool_call|git push/, 'not one event of the call went out');
  t.match(text, /HELD: the exec tool call/);
});

t.test('harmless code runs; rm -rf / in code is blocked, not streamed', async (t) => {
  const { openai, ask, lastTrace } = await proxyWith(t, 'closed');
  const allowed = await ask('touch');
  t.match(allowed.output, [{ type: 'custom_tool_call', call_id: 'call_exec', name: 'exec', input: TOUCH }], 'the call arrives whole');
  t.same(lastTrace().toolCalls, []);

  const wiped = await openai.responses.create({ model: 'gpt-4o-mini', input: 'wipe', tools: [EXEC_TOOL] }).withResponse();
  t.same(wiped.data.output.map((o) => o.type), ['message']);
  t.match(wiped.data.output_text, /^\[Svc Governance\] BLOCKED: the exec tool call was blocked by rule destructive-shell: destructive shell command: recursive rm of \//);
  t.equal(wiped.response.headers.get('x-svc-enforcement'), 'HIJACK');
});

t.test('an output item svc cannot read follows the rules\' failure policy', async (t) => {
  const closed = await proxyWith(t, 'closed');
  const blocked = await closed.ask('teleport');
  t.same(blocked.output.map((o) => o.type), ['message']);
  t.match(textOf(blocked), /^\[Svc Governance\] BLOCKED: the teleport_call tool call was blocked by rule unjudgeable_call: svc cannot read a teleport_call item/);
  t.match(closed.lastTrace(), { toolCalls: [{ id: 'call_tp', name: 'teleport_call', action: 'block', rule: 'unjudgeable_call', substituted: true }] });

  const open = await proxyWith(t, 'open');
  const passed = await open.ask('teleport');
  t.match(passed.output, [{ type: 'teleport_call', destination: 'mars' }], 'open: it goes through');
  t.match(open.lastTrace(), { enforcement: 'BYPASS', toolCalls: [], warnings: ['tool_call_unjudged:teleport_call'] }, 'and the trace says it went unjudged');
});
