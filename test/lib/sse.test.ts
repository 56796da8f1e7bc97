import t from 'tap';
import { dataLinesWithObject, parseSseEvents, SseFramer } from '../../src/lib/sse.js';
import { countingParses } from '../helpers/json-parses.js';

const b = (s: string) => Buffer.from(s);

t.test('a chunk ending on an event boundary passes through untouched', async (t) => {
  const framer = new SseFramer();
  const chunk = b('data: {"a":1}\n\ndata: {"a":2}\n\n');
  t.equal(framer.push(chunk), chunk, 'same buffer, no copy');
  t.equal(framer.flush(), null);
});

t.test('a chunk ending on a CRLF boundary, or on LF after CRLF events, passes through untouched', async (t) => {
  for (const text of ['event: x\r\ndata: 1\r\n\r\n', 'data: 1\r\n\r\ndata: 2\n\n', 'data: 1\r\n\n']) {
    const chunk = b(text);
    t.equal(new SseFramer().push(chunk), chunk, JSON.stringify(text));
  }
  const framer = new SseFramer();
  t.equal(framer.push(b('data: 1\n\ndata: 2\r\n'))?.toString(), 'data: 1\n\n', 'a line end that is not a blank line is no boundary');
  t.equal(framer.push(b('\r\n'))?.toString(), 'data: 2\r\n\r\n');
});

t.test('a partial event is held until its end arrives', async (t) => {
  const framer = new SseFramer();
  t.equal(framer.push(b('data: {"a"')), null);
  t.equal(framer.push(b(':1}\n')), null);
  t.equal(framer.push(b('\ndata: {"b"'))?.toString(), 'data: {"a":1}\n\n');
  t.equal(framer.push(b(':2}\n\n'))?.toString(), 'data: {"b":2}\n\n');
});

t.test('CRLF event boundaries are recognised', async (t) => {
  const framer = new SseFramer();
  t.equal(framer.push(b('event: x\r\ndata: 1\r\n\r\nevent: y'))?.toString(), 'event: x\r\ndata: 1\r\n\r\n');
  t.equal(framer.flush()?.toString(), 'event: y');
});

t.test('an event larger than the bound is released rather than held', async (t) => {
  const framer = new SseFramer(16);
  t.equal(framer.push(b('data: 0123456789')), null);
  t.equal(framer.push(b('abcdefghij'))?.toString(), 'data: 0123456789abcdefghij');
});

t.test('dataLinesWithObject parses only the data lines where the key holds an object', async (t) => {
  const events = 'data: {"x":1}\n\ndata: {"usage":{"prompt_tokens":3}}\n\ndata: [DONE]\n\n';
  t.same(dataLinesWithObject(events, '"usage"'), [{ usage: { prompt_tokens: 3 } }]);
  t.same(dataLinesWithObject('data: {"x":1}\n\n', '"usage"'), []);
  t.same(dataLinesWithObject('data: {"usage": {broken\n\n', '"usage"'), [], 'unparseable lines are skipped');
  const many = 'event: message_delta\r\ndata: {"usage" :\t{"output_tokens":1}, "note":"usage"}\r\n\r\n: "usage" in a comment\n\ndata: {"usage":{"output_tokens":2}}';
  t.same(dataLinesWithObject(many, '"usage"'), [{ usage: { output_tokens: 1 }, note: 'usage' }, { usage: { output_tokens: 2 } }], 'each line once, blanks around the colon, CRLF lines, the last line without its newline; other fields ignored');
  const quoted = 'data: {"delta":{"content":"the \\"usage\\": {} key"}}\n\ndata: {"usage":{"output_tokens":4}}\n\n';
  t.same(dataLinesWithObject(quoted, 'usage"'), [{ usage: { output_tokens: 4 } }], 'the end of the key: a quoted word inside a text is escaped, so it does not match');
});

t.test("dataLinesWithObject passes over OpenAI's null usage in every chunk without parsing it", async (t) => {
  const chunk = (content: string) => `data: {"id":"c","choices":[{"index":0,"delta":{"content":"${content}"}}],"usage":null}\n\n`;
  const stream = chunk('a') + chunk('b') + 'data: {"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}\n\n' + chunk('c') + 'data: [DONE]\n\n';
  const { result: found, parses } = await countingParses(() => dataLinesWithObject(stream, 'usage"'));
  t.same(found, [{ id: 'c', choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }]);
  t.equal(parses, 1, 'only the line with the figures is parsed');
  const nested = 'data: {"usage":null,"response":{"usage":{"output_tokens":7}}}\n\n';
  t.same(dataLinesWithObject(nested, 'usage"'), [{ usage: null, response: { usage: { output_tokens: 7 } } }], 'a null before an object on the same line: the line is read');
  const accented = `${chunk('é€😀')}data: {"choices":[],"usage":{"completion_tokens":3}}\n\n`;
  t.same(dataLinesWithObject(accented, 'usage"'), [{ choices: [], usage: { completion_tokens: 3 } }], 'text that is not ASCII before the line');
});

t.test('parseSseEvents reads each event: name, JSON data, raw text', async (t) => {
  const events = parseSseEvents(b('event: ping\ndata: {"a":1}\n\ndata: [DONE]\r\n\r\ndata: {"b":\ndata: 2}\n\n: keep-alive\n\n'));
  t.same(events, [
    { raw: 'event: ping\ndata: {"a":1}', name: 'ping', data: { a: 1 } },
    { raw: 'data: [DONE]', name: null, data: null },
    { raw: 'data: {"b":\ndata: 2}', name: null, data: { b: 2 } },
    { raw: ': keep-alive', name: null, data: null },
  ]);
  t.same(parseSseEvents(b('data: {broken\n\ndata: [1,2]\n\n')).map((e) => e.data), [null, null], 'broken JSON and non-objects read as null');
});
