import t from 'tap';
import { buildPolicyConfig } from '../../src/policy/policy-config.js';
import { StreamRedactor } from '../../src/policy/stream.js';
import type { WorkspaceSettings } from '../../src/config/settings.js';
import { countingParses } from '../helpers/json-parses.js';

const CARD = '4539 1488 0343 6467';
const policy = (settings: WorkspaceSettings = {}) => buildPolicyConfig({ version: 'v' + Math.random(), settings, localPii: undefined, env: {} });

const chunk = (content: string, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }], ...extra })}\n\n`;
const finish = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;

interface StreamEvent {
  type?: string;
  choices?: Array<{ delta?: { content?: string; refusal?: string; reasoning_content?: string } }>;
  delta?: string | { text?: string; thinking?: string; partial_json?: string };
  content_block?: { text?: string; thinking?: string };
  item?: { content?: Array<{ text?: string; refusal?: string }>; summary?: Array<{ text?: string }> };
}

/** The text an event adds to what a client assembles, whatever field carries it. */
function textOf(event: StreamEvent): string {
  const choice = event.choices?.[0]?.delta;
  if (choice !== undefined) return (choice.reasoning_content ?? '') + (choice.refusal ?? '') + (choice.content ?? '');
  if (typeof event.delta === 'string') return event.type?.endsWith('.delta') === true ? event.delta : '';
  if (event.delta !== undefined) return event.delta.text ?? event.delta.thinking ?? event.delta.partial_json ?? '';
  if (event.content_block !== undefined) return event.content_block.text ?? event.content_block.thinking ?? '';
  if (event.type === 'response.output_item.added') return [...(event.item?.summary ?? []), ...(event.item?.content ?? [])].map((p) => ('refusal' in p ? p.refusal : p.text) ?? '').join('');
  return '';
}

/** Runs frames through a redactor and returns the text the client would assemble. */
function run(redactor: StreamRedactor, frames: string[]): { text: string; raw: string } {
  let raw = '';
  for (const f of frames) raw += redactor.push(Buffer.from(f)).toString();
  raw += redactor.finish()?.toString() ?? '';
  return { text: assembled(raw), raw };
}

/** The text a client assembles from a stream's events. */
function assembled(raw: string): string {
  let text = '';
  for (const line of raw.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    text += textOf(JSON.parse(line.slice(6)) as StreamEvent);
  }
  return text;
}

t.test('a card number split across three SSE frames is redacted in the stream', async (t) => {
  const redactor = new StreamRedactor(policy());
  const { text, raw } = run(redactor, [chunk('Your card is 4539 14'), chunk('88 0343 '), chunk('6467, keep it safe.') + finish]);
  t.equal(text, 'Your card is [REDACTED:pii.card], keep it safe.');
  t.notMatch(raw, /4539|6467/, 'no digit of it reached the client');
  t.match(raw, /data: \[DONE\]\n\n$/, 'the stream still ends properly');
  t.match(redactor.findings, [{ detector: 'pii.card', action: 'redact' }]);
});

t.test('only the longest possible match is held back, and only when one may be in progress', async (t) => {
  const redactor = new StreamRedactor(policy());
  const withDigits = 'x'.repeat(4990) + ' build 4.12';
  const out = redactor.push(Buffer.from(chunk(withDigits))).toString();
  const released = (JSON.parse(out.slice(6)) as { choices: Array<{ delta: { content: string } }> }).choices[0]!.delta.content;
  t.ok(released.length >= withDigits.length - 300, `released ${released.length} of ${withDigits.length} characters at once`);
  t.ok(released.length < withDigits.length, 'the end, which holds digits, waits for what follows');

  const prose = Buffer.from(chunk('Plain prose with no numbers at all streams straight through') + chunk(' and so does this.'));
  t.equal(new StreamRedactor(policy()).push(prose), prose, 'the very same bytes: nothing held, nothing re-encoded');

  const iban = new StreamRedactor(policy());
  const { text } = run(iban, [chunk('My IBAN is GB'), chunk('82 WEST 1234 5698 7654 32 thanks'), finish]);
  t.equal(text, 'My IBAN is [REDACTED:pii.iban] thanks', 'a country code at the end of a delta is held for what follows');
});

t.test('a keyword in one delta and bare digits in the next are redacted together', async (t) => {
  const redactor = new StreamRedactor(policy());
  const { text, raw } = run(redactor, [chunk('Sure. The SSN: '), chunk('536221234'), chunk(' is on file.'), finish]);
  t.equal(text, 'Sure. The SSN: [REDACTED:pii.ssn] is on file.');
  t.notMatch(raw, /536221234/);
  const straddling = new StreamRedactor(policy());
  const long = run(straddling, [chunk(`${'z'.repeat(300)} ssn 536`), chunk('221234 ok'), finish]);
  t.notMatch(long.raw, /536221234|221234/, 'held with its keyword when the digits cross the cut');
});

t.test('Anthropic text_delta and input_json_delta are redacted per content block', async (t) => {
  const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const redactor = new StreamRedactor(policy());
  const { text, raw } = run(redactor, [
    ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `card ${CARD.slice(0, 7)}` } }),
    ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `${CARD.slice(7)} end` } }),
    ev('content_block_stop', { index: 0 }),
    ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'pay', input: {} } }),
    ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"card": "4539 1488' } }),
    ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: ' 0343 6467"}' } }),
    ev('content_block_stop', { index: 1 }),
    ev('message_stop', {}),
  ]);
  t.equal(text, 'card [REDACTED:pii.card] end{"card": "[REDACTED:pii.card]"}');
  t.notMatch(raw, /6467/);
  t.ok(raw.indexOf('"index":0') < raw.indexOf('content_block_stop'), 'held text of a block goes out before its stop');
});

t.test('block: the rest of the response is replaced by a notice the agent can read', async (t) => {
  const redactor = new StreamRedactor(policy({ piiDetectors: { 'pii.card': 'block' } }));
  const { text } = run(redactor, [chunk(`Here: ${CARD} and then more text that keeps going for a while ${'y'.repeat(400)}`), chunk('more'), finish]);
  t.match(text, /^\[svc: the rest of this response was withheld: it contained pii\.card\]$/);
  t.ok(redactor.blockedBy);
});

t.test('shadow: findings only, the stream is untouched', async (t) => {
  const redactor = new StreamRedactor(policy({ featureFlags: { ff_shadow_enforcement: true } }));
  const { text } = run(redactor, [chunk(`Your card is ${CARD}.`), finish]);
  t.equal(text, `Your card is ${CARD}.`);
  t.equal(redactor.findings.length, 1);
});

t.test('the last delta sharing its chunk with finish_reason: held text goes out in that chunk, before [DONE]', async (t) => {
  const last = (content: string) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`;
  const redactor = new StreamRedactor(policy());
  const { text, raw } = run(redactor, [chunk('Your card is 4539 1488 '), last('0343 6467, keep it safe.')]);
  t.equal(text, 'Your card is [REDACTED:pii.card], keep it safe.', 'the card split into the finishing chunk is found whole');
  t.notMatch(raw, /4539|6467/);
  t.match(raw, /data: \[DONE\]\n\n$/, '[DONE] is still the last event');
  t.equal(raw.match(/finish_reason":"stop"/g)?.length, 1, 'one finishing chunk, carrying the text');
  t.match(raw, /keep it safe\.[^\n]*"finish_reason":"stop"/, 'the text rides in the finishing chunk');

  const digitsHeld = new StreamRedactor(policy());
  const prose = run(digitsHeld, [chunk('Version '), last('4.12 is out.')]);
  t.equal(prose.text, 'Version 4.12 is out.', 'text that only looked like a match in progress is released whole');
});

t.test('[DONE] releases whatever a stream without a finishing chunk still holds, before it', async (t) => {
  const redactor = new StreamRedactor(policy());
  const raw = redactor.push(Buffer.from(chunk('Build 4.12 passed') + 'data: [DONE]\n\n')).toString();
  t.equal(redactor.finish(), null, 'nothing is left for after the end');
  const done = raw.indexOf('data: [DONE]');
  t.ok(done > raw.lastIndexOf('passed'), 'the held text precedes [DONE]');
  t.match(raw, /data: \[DONE\]\n\n$/);
});

const ev = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

t.test('Anthropic thinking deltas and text carried in content_block_start are inspected', async (t) => {
  const { text, raw } = run(new StreamRedactor(policy()), [
    ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: `the card is ${CARD.slice(0, 9)}` } }),
    ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: `${CARD.slice(9)}. ` } }),
    ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' } }),
    ev('content_block_stop', { index: 0 }),
    ev('content_block_start', { index: 1, content_block: { type: 'text', text: `Card: ${CARD.slice(0, 7)}` } }),
    ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: `${CARD.slice(7)} ok` } }),
    ev('content_block_stop', { index: 1 }),
    ev('content_block_start', { index: 2, content_block: { type: 'text', text: `Again ${CARD}` } }),
    ev('content_block_stop', { index: 2 }),
    ev('message_stop', {}),
  ]);
  t.equal(text, 'the card is [REDACTED:pii.card]. Card: [REDACTED:pii.card] okAgain [REDACTED:pii.card]');
  t.notMatch(raw, /6467/);
  t.equal(raw.match(/event: content_block_start/g)?.length, 3, 'held text of an opening event goes out in a delta, never a second start');
  t.match(raw, /EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds/, 'the signature passes untouched');
});

t.test('OpenAI reasoning_content and refusal deltas are inspected', async (t) => {
  const delta = (fields: Record<string, string>) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: fields, finish_reason: null }] })}\n\n`;
  const { text, raw } = run(new StreamRedactor(policy()), [
    delta({ reasoning_content: `Thinking about ${CARD.slice(0, 9)}` }),
    delta({ reasoning_content: `${CARD.slice(9)}. ` }),
    delta({ refusal: `I will not charge ${CARD.slice(0, 4)}` }),
    delta({ refusal: `${CARD.slice(4)}.` }),
    finish,
  ]);
  t.equal(text, 'Thinking about [REDACTED:pii.card]. I will not charge [REDACTED:pii.card].');
  t.notMatch(raw, /6467/);
});

t.test('Responses refusal, reasoning summary and output_item.added texts are inspected', async (t) => {
  const at = { item_id: 'msg_1', output_index: 0 };
  const { text, raw } = run(new StreamRedactor(policy()), [
    ev('response.output_item.added', { output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: `Card ${CARD}` }] } }),
    ev('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 1, delta: `then ${CARD.slice(0, 6)}` }),
    ev('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 1, delta: `${CARD.slice(6)}; ` }),
    ev('response.output_item.done', { output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } }),
    ev('response.output_item.added', { output_index: 1, item: { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: `Paid with ${CARD}. ` }] } }),
    ev('response.refusal.delta', { ...at, output_index: 1, content_index: 1, delta: `No: ${CARD.slice(0, 10)}` }),
    ev('response.refusal.delta', { ...at, output_index: 1, content_index: 1, delta: `${CARD.slice(10)}.` }),
    ev('response.completed', { response: { id: 'r', output: [] } }),
  ]);
  t.equal(text, 'Card [REDACTED:pii.card]then [REDACTED:pii.card]; Paid with [REDACTED:pii.card]. No: [REDACTED:pii.card].');
  t.notMatch(raw, /6467/);
});

t.test('an event whose text changes is edited in place: every other byte the provider sent is kept', async (t) => {
  const r = new StreamRedactor(policy({ piiDetectors: { 'pii.email': 'redact' } }));
  // Spacing and key order JSON.stringify would not write; the trailing word is held back (it may begin an email).
  const first = 'data: {"choices": [{"delta": {"content": "write to jane"}, "index": 0}], "id": "c1"}\n\n';
  const out = r.push(Buffer.from(first)).toString();
  t.equal(out, 'data: {"choices": [{"delta": {"content": "write to "}, "index": 0}], "id": "c1"}\n\n');
  const next = r.push(Buffer.from('data: {"choices": [{"delta": {"content": ".doe@example.com"}, "index": 0}], "id": "c1"}\n\n')).toString();
  t.equal(next, 'data: {"choices": [{"delta": {"content": ""}, "index": 0}], "id": "c1"}\n\n', 'an address in progress is held whole');
  const rest = r.push(Buffer.from(finish)).toString();
  t.ok(rest.startsWith('data: {"choices": [{"delta": {"content": "[REDACTED:pii.email]"}, "index": 0}], "id": "c1"}\n\n'), 'and released whole, redacted, when its channel closes, in the last event of its run with only the text replaced');
  t.notMatch(out + next + rest, /doe@/);
});

t.test('an event whose text cannot be found once, as a value, is written again from its parsed form', async (t) => {
  const r = new StreamRedactor(policy({ piiDetectors: { 'pii.email': 'redact' } }));
  // The text also appears as another value: editing the first occurrence could edit the wrong one.
  const twice = 'data: {"id":"hello jane","choices":[{"index":0,"delta":{"content":"hello jane"}}]}\n\n';
  const out = r.push(Buffer.from(twice)).toString();
  t.same(JSON.parse(out.slice(6)), { id: 'hello jane', choices: [{ index: 0, delta: { content: 'hello ' } }] });
  // Written with escapes JSON.stringify would not use: not found as written, so serialised.
  const escaped = 'data: {"choices":[{"index":0,"delta":{"content":"caf\\u00e9 bob"}}]}\n\n';
  const second = r.push(Buffer.from(escaped)).toString();
  t.same(JSON.parse(second.slice(6)), { choices: [{ index: 0, delta: { content: 'janecafé ' } }] });
});

t.test('runs of one shape: deltas read as text are redacted exactly as parsed ones, and each event keeps its own bytes', async (t) => {
  const obfuscated = (content: string, obfuscation: string, finishReason: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1741570283, choices: [{ index: 0, delta: { content }, finish_reason: finishReason }], obfuscation })}\n\n`;
  const frames = [obfuscated('Your card ', 'aB'), obfuscated('is 4539 14', 'k3Zq9'), obfuscated('88 0343 ', ''), obfuscated('6467, keep ', 'x'), obfuscated('it safe.', 'yy'), obfuscated('', 'zz', 'stop'), 'data: [DONE]\n\n'];
  const r = new StreamRedactor(policy());
  const { text, raw } = run(r, frames);
  t.equal(text, 'Your card is [REDACTED:pii.card], keep it safe.');
  t.notMatch(raw, /4539|6467/);
  t.same(
    raw.split('\n\n').filter((e) => e.startsWith('data: {')).map((e) => (JSON.parse(e.slice(6)) as { obfuscation: string }).obfuscation),
    ['aB', 'k3Zq9', '', 'x', 'yy', 'zz'],
    "every event keeps its own padding",
  );

  const stamped = (content: string, created: number) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  const varying = new StreamRedactor(policy());
  const split = ['Card ', '4539 1488', ' 0343 6467', ' ok', ' and', ' more', ' words', ' here'].map((piece, i) => stamped(piece, 1741570283 + i));
  t.equal(run(varying, [...split, finish]).text, 'Card [REDACTED:pii.card] ok and more words here', 'events that differ in more than their text are parsed, each');

  const huge = new StreamRedactor(policy());
  const long = 'ab\n'.repeat(4_000_000);
  const big = run(huge, [chunk('short '), chunk(`${long} card ${CARD} end`), chunk(' after'), finish]);
  t.equal(big.text, `short ${long} card [REDACTED:pii.card] end after`, 'a 12 MB delta between shaped ones is parsed, not matched');

  const code = new StreamRedactor(policy({ piiDetectors: { 'pii.email': 'redact' } }));
  const lines = run(code, [chunk('const a = "x";\n// mail '), chunk('jane.doe@exa'), chunk('mple.com\n'), chunk('return "\\\\ok";\n'), finish]);
  t.equal(lines.text, 'const a = "x";\n// mail [REDACTED:pii.email]\nreturn "\\\\ok";\n', 'escaped quotes, backslashes and newlines');
});

t.test('Responses runs: each delta keeps its sequence number, and held text goes out with the last one seen', async (t) => {
  const delta = (text: string, sequence: number) =>
    `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: text, sequence_number: sequence })}\n\n`;
  const r = new StreamRedactor(policy());
  const { text, raw } = run(r, [
    delta('Card 4539 ', 4),
    delta('1488 0343 ', 5),
    delta('6467 ok, ', 6),
    delta('call +1 415', 7),
    ev('response.output_text.done', { item_id: 'msg_1', output_index: 0, content_index: 0, text: 'Card 4539 1488 0343 6467 ok, call +1 415', sequence_number: 8 }),
  ]);
  t.equal(text, 'Card [REDACTED:pii.card] ok, call +1 415');
  t.notMatch(raw, /4539|6467/);
  const sequences = raw.split('\n\n').filter((e) => e.includes('"response.output_text.delta"')).map((e) => (JSON.parse(e.split('data: ')[1]!) as { sequence_number: number }).sequence_number);
  t.same(sequences, [4, 5, 6, 7, 7], 'the held text is flushed as a continuation of the last delta event');
});

t.test('two choices streamed in turn keep their texts apart', async (t) => {
  const choice = (index: number, content: string) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index, delta: { content }, finish_reason: null }] })}\n\n`;
  const r = new StreamRedactor(policy());
  const out = run(r, [choice(0, 'A: 4539 1488 '), choice(1, 'B: 0343 6467 '), choice(0, '0343 6467 done'), choice(1, 'nothing'), choice(0, ' more'), finish]).raw;
  const texts = ['', ''];
  for (const e of out.split('\n\n')) {
    if (!e.startsWith('data: {')) continue;
    const c = (JSON.parse(e.slice(6)) as { choices: Array<{ index: number; delta: { content?: string } }> }).choices[0]!;
    texts[c.index] += c.delta.content ?? '';
  }
  t.same(texts, ['A: [REDACTED:pii.card] done more', 'B: 0343 6467 nothing'], 'a card is never assembled from two choices');
});

t.test('a stream of a shape verified in an earlier one is read as text from its first delta: only its other events are parsed', async (t) => {
  // Ids and creation times differ from stream to stream, and a model no other test streams keeps this shape to itself.
  const stream = (id: string, created: number, pieces: string[]) => {
    const event = (delta: Record<string, unknown>, finishReason: string | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: 'shape-test', choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
    return [event({ role: 'assistant', content: '' }), ...pieces.map((content) => event({ content })), event({}, 'stop'), 'data: [DONE]\n\n'];
  };
  run(new StreamRedactor(policy()), stream('chatcmpl-1', 1741570283, ['Hello', ' there', ' again']));

  const frames = stream('chatcmpl-2', 1741570999, ['Your card ', 'is 4539 14', '88 0343 ', '6467, keep ', 'it safe.']);
  const redactor = new StreamRedactor(policy());
  const { result: raw, parses } = await countingParses(() => frames.map((frame) => redactor.push(Buffer.from(frame)).toString()).join(''));
  t.equal(parses, 2, 'the role chunk and the finishing chunk; no delta, no probe');
  const text = raw
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => textOf(JSON.parse(e.slice(6)) as StreamEvent))
    .join('');
  t.equal(text, 'Your card is [REDACTED:pii.card], keep it safe.', 'redacted exactly as parsed deltas are');
  t.notMatch(raw, /4539|6467/);
  t.match(raw, /"id":"chatcmpl-2","object":"chat.completion.chunk","created":1741570999/, 'each event keeps its own id and time');
  t.notMatch(raw, /chatcmpl-1|1741570283/);
});

t.test("held text after a run whose events carry OpenAI's null usage goes out in the provider's own event, only its text replaced", async (t) => {
  // With stream_options.include_usage, every chunk before the last carries "usage":null.
  const event = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c9', object: 'chat.completion.chunk', created: 1741570300, model: 'usage-null-test', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], usage: null })}\n\n`;
  const redactor = new StreamRedactor(policy({ piiDetectors: { 'pii.email': 'redact' } }));
  const before = [event({ role: 'assistant', content: '' }), event({ content: 'write to ' }), event({ content: 'jane' }), event({ content: '.doe@example.com' })];
  for (const frame of before) redactor.push(Buffer.from(frame));
  const { result: raw, parses } = await countingParses(() => redactor.push(Buffer.from(event({}, 'stop'))).toString());
  t.equal(parses, 1, 'the finishing chunk is parsed; the held text needs no parse of its template');
  const flushed = raw.split('\n\n')[0]!;
  t.equal(flushed, event({ content: '[REDACTED:pii.email]' }).trimEnd(), 'byte for byte the provider\'s chunk, with the redacted text');
});

t.test('held text after a run whose events carry more than their text goes out in an event without it', async (t) => {
  // Some servers repeat the role in every chunk: the held text must not go out as a second message start.
  const withRole = (content: string) => `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }] })}\n\n`;
  for (const round of ['first stream', 'known shape']) {
    const { text, raw } = run(new StreamRedactor(policy({ piiDetectors: { 'pii.email': 'redact' } })), [withRole('write to '), withRole('jane'), withRole('.doe@example.com'), finish]);
    t.equal(text, 'write to [REDACTED:pii.email]', round);
    const flushed = raw.split('\n\n').find((e) => e.includes('[REDACTED'))!;
    t.same(JSON.parse(flushed.slice(6)), { id: 'c1', choices: [{ index: 0, delta: { content: '[REDACTED:pii.email]' }, finish_reason: null }] }, `${round}: no role in the released event`);
  }
});

/** All five detectors redacting: prose is held too, a trailing word being an address's possible start. */
const allFive = () => policy({ piiDetectors: { 'pii.card': 'redact', 'pii.iban': 'redact', 'pii.ssn': 'redact', 'pii.email': 'redact', 'pii.phone': 'redact' } });

t.test('deltas that arrive in one read are taken in together: only what the read ends with is held', async (t) => {
  const words = ['Deploy', 'ing the', ' new', ' build', ' today'];
  const together = run(new StreamRedactor(allFive()), [words.map((w) => chunk(w)).join('') + finish]);
  t.equal(together.text, words.join(''));
  for (const w of [' new', ' build']) t.ok(together.raw.includes(chunk(w)), `${JSON.stringify(w)} goes out as the provider sent it`);

  const apart = run(new StreamRedactor(allFive()), [...words.map((w) => chunk(w)), finish]);
  t.equal(apart.text, words.join(''));
  t.notOk(apart.raw.includes(chunk(' new')), 'read by read, each delta carries the word held from the one before');
});

t.test('a value split across deltas of one read, or across the end of a read, is redacted whole', async (t) => {
  const email = run(new StreamRedactor(allFive()), [[chunk('write to bo'), chunk('b.smith@exa'), chunk('mple.com today')].join('') + finish]);
  t.equal(email.text, 'write to [REDACTED:pii.email] today');
  t.notMatch(email.raw, /bob|smith|@exa|example/);

  const card = run(new StreamRedactor(allFive()), [chunk('card 4539') + chunk(' 1488 03'), chunk('43 6467') + chunk(' is yours') + finish]);
  t.equal(card.text, 'card [REDACTED:pii.card] is yours');
  t.notMatch(card.raw, /4539|1488|0343|6467/);

  const known = new StreamRedactor(allFive());
  run(known, [chunk('a first stream makes the shape known'), chunk(' to the next'), finish]);
  const read = [chunk('SSN: 536'), chunk('22'), chunk('1234 on file')].join('');
  const redactor = new StreamRedactor(allFive());
  const { result: raw, parses } = await countingParses(() => redactor.push(Buffer.from(read)).toString());
  t.equal(parses, 0, 'no delta parsed: the shape is known');
  const whole = raw + run(redactor, [finish]).raw;
  t.equal(assembled(whole), 'SSN: [REDACTED:pii.ssn] on file');
  t.notMatch(whole, /536|1234/);
});

t.test('a delta with a long unbroken token costs its length, not its square', async (t) => {
  // The trailing token was found by /\S*$/, which tries every position: 20,000 characters and a
  // word after a space took it 0.7 s, 300,000 would take minutes.
  const token = 'A'.repeat(300_000);
  const { text } = run(new StreamRedactor(allFive()), [chunk(`${token} and`), chunk(' more'), finish]);
  t.equal(text, `${token} and more`);
});
