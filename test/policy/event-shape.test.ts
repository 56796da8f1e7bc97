import t from 'tap';
import { EventShape, literalAt, MAX_SHAPED_EVENT } from '../../src/policy/event-shape.js';

const chat = (content: string, extra: Record<string, unknown> = {}, index = 0) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1741570283, choices: [{ index, delta: { content }, finish_reason: null }], ...extra })}`;

function shapeOf(raw: string, text: string): EventShape {
  const literal = JSON.stringify(text);
  const at = literalAt(raw, literal);
  if (at < 0) throw new Error(`no single literal of ${literal} in ${raw}`);
  return EventShape.around(raw, at, at + literal.length);
}

t.test('an event of the same shape gives its delta, with where the literal stands', async (t) => {
  const shape = shapeOf(chat('Hello'), 'Hello');
  const next = chat(' world');
  const found = shape.match(next);
  t.same(found && { text: found.text, literal: next.slice(found.start, found.end) }, { text: ' world', literal: '" world"' });
  t.equal(shape.match(chat(''))?.text, '', 'an empty delta');
});

t.test('escapes in the delta are decoded; quotes, backslashes and newlines of code stream through it', async (t) => {
  const shape = shapeOf(chat('a'), 'a');
  const texts = { 'newline, quotes and a backslash': 'line\n"quoted"\\path', tab: 'tab\there', 'non-ASCII and a line separator': 'é and \u2028', 'an escaped control character': '\u0001 control' };
  for (const [name, text] of Object.entries(texts)) t.equal(shape.match(chat(text))?.text, text, name);
  t.equal(shape.match(chat('x').replace('"x"', '"\\u0078"'))?.text, 'x', 'a \\u escape');
});

t.test('anything but the delta differing is another shape', async (t) => {
  const shape = shapeOf(chat('Hello'), 'Hello');
  t.equal(shape.match(chat('Hi', {}, 1)), null, 'another choice');
  t.equal(shapeOf(chat('Hello', { n: 1 }), 'Hello').match(chat('Hi', { n: 2 })), null, 'a number that is not a known counter');
  t.equal(shape.match(chat('Hi', { usage: null })), null, 'one more field');
  t.equal(shape.match(chat('Hi').replace('"content":"Hi"', '"content":"Hi","role":"assistant"')), null, 'a second field after the delta');
  t.equal(shape.match(chat('Hi') + ' '), null, 'trailing bytes');
  t.equal(shape.match(chat('Hi').replace('"Hi"', '"H"i"')), null, 'a literal that is not one string');
  t.equal(shape.match(chat('Hi').replace('"Hi"', '"\\x"')), null, 'an invalid escape');
  t.equal(shape.match(chat('Hi').replace('"Hi"', '"\\u12G4"')), null, 'a \\u escape without four hex digits');
  t.equal(shape.match(chat('Hi').replace('"Hi"', '"Hi\\"')), null, 'an escaped quote, so the literal never ends');
  t.equal(shape.match(chat('Hi').replace('"Hi"', '"H\ti"')), null, 'a raw control character, which JSON does not allow');
  t.equal(shape.match(chat('Hi').replace('"Hi"', '123')), null, 'not a string');
  t.equal(shape.match(chat('x'.repeat(MAX_SHAPED_EVENT))), null, 'an event past the bound, which is parsed instead');
});

t.test("OpenAI's obfuscation padding and the Responses API's sequence_number may differ from event to event", async (t) => {
  const shape = shapeOf(chat('Hello', { obfuscation: 'k3Zq' }), 'Hello');
  t.equal(shape.match(chat(' there', { obfuscation: '' }))?.text, ' there');
  t.equal(shape.match(chat(' there', { obfuscation: 'aVeryLongPadding09' }))?.text, ' there');
  t.equal(shape.match(chat(' there', { obfuscation: 'a"b' })), null, 'a padding with an escape is parsed instead');
  t.equal(shape.match(chat(' there')), null, 'the padding must be there');

  const delta = (text: string, sequence: number | string) =>
    `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":${JSON.stringify(text)},"sequence_number":${sequence}}`;
  const responses = shapeOf(delta('Hi', 7), 'Hi');
  t.equal(responses.match(delta(' you', 8))?.text, ' you');
  t.equal(responses.match(delta(' you', 123456))?.text, ' you');
  t.equal(responses.match(delta(' you', '08')), null, 'a leading zero is not a JSON number');
  t.equal(responses.match(delta(' you', '"8"')), null, 'a counter of another type');
  t.equal(responses.match(delta(' you', 8).replace('"output_index":0', '"output_index":1')), null, 'another output item');
});

t.test('ids and creation times may differ from stream to stream: one shape serves them all', async (t) => {
  const shape = shapeOf(chat('Hello'), 'Hello');
  const other = chat(' you').replace('"id":"chatcmpl-1"', '"id":"chatcmpl-9f2c"').replace('"created":1741570283', '"created":1800000000');
  t.equal(shape.match(other)?.text, ' you');
  t.equal(shapeOf(chat('a'), 'a').key, shapeOf(other, ' you').key, 'equal shapes have equal keys');
  t.not(shape.key, shapeOf(chat('a', { model: 'gpt-4o' }), 'a').key, 'another model is another shape');
  t.equal(shape.match(chat('x').replace('"id":"chatcmpl-1"', '"id":7')), null, 'an id of another type');

  const delta = (text: string, item: string) => `data: {"type":"response.output_text.delta","item_id":${JSON.stringify(item)},"output_index":0,"content_index":0,"delta":${JSON.stringify(text)}}`;
  t.equal(shapeOf(delta('Hi', 'msg_1'), 'Hi').match(delta(' there', 'msg_2'))?.text, ' there', 'a Responses item id');
});

t.test("a shape specialised to one stream takes that stream's ids and times as they are, and still lets padding vary", async (t) => {
  const general = shapeOf(chat('Hello', { obfuscation: 'k3' }), 'Hello');
  const own = general.specialised(chat(' you', { obfuscation: 'x' }));
  t.equal(own.match(chat(' there', { obfuscation: 'pad' }))?.text, ' there', 'the same stream, another padding');
  const other = chat(' there', { obfuscation: 'pad' }).replace('"id":"chatcmpl-1"', '"id":"chatcmpl-2"');
  t.equal(own.match(other), null, "another stream's id");
  t.equal(general.match(other)?.text, ' there', 'which the general shape still takes');
  t.same(JSON.parse(own.probe('P').slice(6)), { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1741570283, choices: [{ index: 0, delta: { content: 'P' }, finish_reason: null }], obfuscation: '' });
  t.equal(general.specialised('data: {}'), general, 'an event of another shape changes nothing');
});

t.test('a probe of the shape is the event with its delta and placeholders for what varies', async (t) => {
  const shape = shapeOf(chat('Hello', { obfuscation: 'k3Zq' }), 'Hello');
  t.same(JSON.parse(shape.probe('P').slice(6)), { id: '', object: 'chat.completion.chunk', created: 0, choices: [{ index: 0, delta: { content: 'P' }, finish_reason: null }], obfuscation: '' });
});

t.test('literalAt: only a single literal standing as a value is certain', async (t) => {
  t.equal(literalAt('{"a":"x"}', '"x"'), 5);
  t.equal(literalAt('{"a": "x"}', '"x"'), 6, 'after a colon and a space');
  t.equal(literalAt('{"a":"x","b":"x"}', '"x"'), -1, 'twice');
  t.equal(literalAt('{"x":1}', '"x"'), -1, 'a key');
  t.equal(literalAt('{"a":"y"}', '"x"'), -1, 'absent');
});
