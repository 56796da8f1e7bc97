import t from 'tap';
import { canonicalArguments, canonicalJson } from '../../../src/policy/anomaly/canonical.js';
import { extractHistory, fingerprintOf as fingerprintOfParts, fingerprintParts } from '../../../src/policy/anomaly/history.js';

const fingerprintOf = (body: Record<string, unknown>) => fingerprintOfParts(fingerprintParts(body));
import { detectAnomalies, plainReport } from '../../../src/policy/anomaly/detect.js';
import { AnomalySessions } from '../../../src/policy/anomaly/sessions.js';

t.test('canonical JSON sorts keys at every level; argument strings are parsed first', async (t) => {
  t.equal(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
  t.equal(canonicalArguments('{"path":"a","limit":1}'), canonicalArguments({ limit: 1, path: 'a' }));
  t.equal(canonicalArguments('not json '), '"not json"');
  t.equal(canonicalArguments(undefined), '{}');
});

t.test('OpenAI chat: tool_calls paired with tool messages by id, errors read from the text', async (t) => {
  const h = extractHistory({
    messages: [
      { role: 'system', content: 'be good' },
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'Looking.', tool_calls: [
        { id: 'a', type: 'function', function: { name: 'bash', arguments: '{"command":"ls","cwd":"."}' } },
        { id: 'b', type: 'function', function: { name: 'read', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 'b', content: 'Error: ENOENT' },
      { role: 'tool', tool_call_id: 'a', content: [{ type: 'text', text: 'done in 1.5s at 2025-01-02T03:04:05Z' }] },
    ],
  });
  t.match(h.calls, [
    { tool: 'bash', args: '{"command":"ls","cwd":"."}', outcome: { text: 'done in ‹dur› at ‹time›' }, isError: false, message: 2 },
    { tool: 'read', args: '{}', outcome: { text: 'Error: ENOENT' }, isError: true, message: 2 },
  ]);
  t.same(h.assistantTexts, [{ text: 'Looking.', message: 2 }]);
  t.same(h.turnOfMessage, [0, 0, 1, 1, 1]);
  t.equal(h.lastUserMessage, 1);
});

t.test('Anthropic: tool_use and tool_result blocks, is_error honoured', async (t) => {
  const h = extractHistory({
    system: 'sys',
    tools: [{ name: 'bash', description: 'Run it', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
    messages: [
      { role: 'user', content: 'start' },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }, { type: 'tool_use', id: 't1', name: 'bash', input: { command: 'make' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true }] },
    ],
  });
  t.match(h.calls, [{ tool: 'bash', args: '{"command":"make"}', outcome: { text: 'boom' }, isError: true }]);
  t.equal(h.lastUserMessage, 0, 'a turn of tool results is not the user speaking');
});

t.test('Responses API: function_call and function_call_output items', async (t) => {
  const h = extractHistory({
    instructions: 'sys',
    tools: [{ type: 'function', name: 'grep', description: 'Search', parameters: { type: 'object' } }],
    input: [
      { role: 'user', content: 'find it' },
      { type: 'function_call', call_id: 'c1', name: 'grep', arguments: '{"pattern":"x"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'src/a.ts:1' },
    ],
  });
  t.match(h.calls, [{ tool: 'grep', args: '{"pattern":"x"}', outcome: { text: 'src/a.ts‹pos›' } }]);
});

t.test('the fingerprint names a session by its first turns, whatever follows', async (t) => {
  const start = [{ role: 'system', content: 's' }, { role: 'user', content: 'task A' }];
  const a = fingerprintOf({ messages: start });
  t.equal(fingerprintOf({ messages: [...start, { role: 'assistant', content: 'hi' }] }), a);
  t.not(fingerprintOf({ messages: [start[0], { role: 'user', content: 'task B' }] }), a);
  t.equal(fingerprintOf({ messages: [{ content: 's', role: 'system' }, { content: 'task A', role: 'user' }] }), a, 'key order does not count');
  const user = (content: unknown) => fingerprintOf({ messages: [{ role: 'user', content }] });
  t.equal(new Set([user('1'), user(1), user(true), user('true'), user(['a', 'b']), user(['ab']), user({ a: 'b' }), user({ ab: '' }), user(null), user('')]).size, 10, 'no two different first turns read the same');
  t.same(extractHistory('nonsense').calls, []);
});

t.test('a long system prompt is fingerprinted by its length, head and tail', async (t) => {
  const prompt = (middle: string, tail = 'cwd: /work/a') => `You are a coding agent. ${'Follow the rules. '.repeat(300)}${middle}${'Be brief. '.repeat(600)}${tail}`;
  const body = (system: string) => ({ system, messages: [{ role: 'user', content: 'fix the test' }] });
  const a = fingerprintOf(body(prompt('x')));
  t.not(fingerprintOf(body(prompt('x', 'cwd: /work/b'))), a, 'the end of the prompt (where harnesses put the folder and date) counts');
  t.not(fingerprintOf(body(prompt('xy'))), a, 'so does its length');
  t.equal(fingerprintOf(body(prompt('y'))), a, 'a change deep in the middle of a long prompt does not');
  t.not(fingerprintOf({ system: 'short x', messages: [] }), fingerprintOf({ system: 'short y', messages: [] }), 'a short text counts whole');
});

t.test('the fingerprint is computed only when something reads it: a session header makes it unnecessary', async (t) => {
  const report = detectAnomalies({ messages: [{ role: 'user', content: 'task A' }] }, [])!;
  const watched = Object.defineProperty({}, 'fingerprint', { get: () => t.fail('read the fingerprint although a header names the session') }) as { fingerprint: string };
  t.equal(AnomalySessions.key('w', 'session-1', watched), 'w\u0000session-1');
  t.equal(AnomalySessions.key('w', null, report), `w\u0000fp:${fingerprintOf({ messages: [{ role: 'user', content: 'task A' }] })}`);
  t.equal(structuredClone(plainReport(report))!.fingerprint, report.fingerprint, 'a report a worker hands back carries it as a value');
});
