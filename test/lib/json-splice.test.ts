import t from 'tap';
import { spliceStrings, type StringEdit } from '../../src/lib/json-splice.js';

/** Parses `raw`, makes each edit where its text is found (a JSON path of keys), and splices. */
function spliced(raw: string, edits: Array<{ path: Array<string | number>; after: string }>): { out: Buffer | null; edited: unknown; bytes: Buffer } {
  const edited = JSON.parse(raw) as unknown;
  const made: StringEdit[] = [];
  for (const { path, after } of edits) {
    let node = edited as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
    const last = path.at(-1)!;
    made.push({ before: node[last] as string, after });
    node[last] = after;
  }
  const bytes = Buffer.from(raw);
  return { out: spliceStrings(bytes, edited, made), edited, bytes };
}

/** Whether `out` is a view of `bytes`' own memory, from its start. */
const writtenOver = (out: Buffer, bytes: Buffer): boolean => out.buffer === bytes.buffer && out.byteOffset === bytes.byteOffset;

t.test('writes each edited string in place and leaves every other byte as it was', async (t) => {
  const raw = '{ "model": "m",\n  "messages": [ {"role": "user", "content": "mail jane@example.com — café"},\n {"role":"user","content":"call 555-0100"} ] }';
  const { out, edited } = spliced(raw, [
    { path: ['messages', 1, 'content'], after: 'call [REDACTED_PHONE]' },
    { path: ['messages', 0, 'content'], after: 'mail [REDACTED_EMAIL] — "café"' },
  ]);
  t.ok(out !== null);
  t.same(JSON.parse(out!.toString('utf8')), edited, 'the bytes mean the edited document');
  t.equal(
    out!.toString('utf8'),
    '{ "model": "m",\n  "messages": [ {"role": "user", "content": "mail [REDACTED_EMAIL] — \\"café\\""},\n {"role":"user","content":"call [REDACTED_PHONE]"} ] }',
    'the spacing and the order of the rest are the sender\'s',
  );
});

t.test('numbers keep the digits they were sent with', async (t) => {
  // Serialising the parse again would send 12345678901234567000 and 1.5.
  const { out } = spliced('{"id":12345678901234567890,"x":1.50,"t":"a@b.co"}', [{ path: ['t'], after: '[R]' }]);
  t.equal(out?.toString('utf8'), '{"id":12345678901234567890,"x":1.50,"t":"[R]"}');
});

t.test('finds the text where a string begins, not inside another one', async (t) => {
  // The first occurrence of "x@y.com" in the bytes opens at an escaped quote inside "a".
  const raw = '{"a":"say \\"x@y.com","b":"x@y.com"}';
  const { out, edited } = spliced(raw, [{ path: ['b'], after: '[REDACTED]' }]);
  t.same(JSON.parse(out!.toString('utf8')), edited);
  t.same(edited, { a: 'say "x@y.com', b: '[REDACTED]' });
  // A run of quotes made by the structure between two strings is not a string either.
  t.equal(spliced('["p","q","\\u002c"]', [{ path: [2], after: 'X' }]).out, null, '"," found only across two strings');
});

t.test('declines whenever the text found might not be the one edited', async (t) => {
  const cases: Array<[string, string, Array<{ path: Array<string | number>; after: string }>]> = [
    // A key given twice: the parse keeps the last value, the bytes hold both. Splicing the first
    // would send the address the parse held, unredacted, to a server that keeps the last.
    ['a key given twice', '{"m":[{"content":"mail a@b.co","content":"mail a\\u0040b.co"}]}', [{ path: ['m', 0, 'content'], after: 'mail [R]' }]],
    ['the text written with escapes', '{"content":"mail a\\u0040b.co"}', [{ path: ['content'], after: 'mail [R]' }]],
    ['a slash escaped', '{"content":"see a@b.co\\/x"}', [{ path: ['content'], after: '[R]' }]],
    ['the same text unedited elsewhere', '{"content":"a@b.co","note":"a@b.co"}', [{ path: ['content'], after: '[R]' }]],
    ['the same text as a key', '{"content":"a@b.co","meta":{"a@b.co":1}}', [{ path: ['content'], after: '[R]' }]],
    ['two edits of the same text', '{"x":"a@b.co","y":"a@b.co"}', [{ path: ['x'], after: '[R]' }, { path: ['y'], after: '[R]' }]],
    ['an edit that writes another edit\'s text', '{"x":"a@b.co","y":"c@d.co"}', [{ path: ['x'], after: 'c@d.co' }, { path: ['y'], after: '[R]' }]],
  ];
  for (const [name, raw, edits] of cases) t.equal(spliced(raw, edits).out, null, name);
});

t.test('a document nested deeper than the call stack', async (t) => {
  const depth = 20_000;
  const raw = `${'['.repeat(depth)}"a@b.co"${']'.repeat(depth)}`;
  const { out } = spliced(raw, [{ path: Array<number>(depth).fill(0), after: '[R]' }]);
  t.equal(out?.toString('utf8'), `${'['.repeat(depth)}"[R]"${']'.repeat(depth)}`, 'where serialising it again overflows the stack');
});

t.test('writes over the bytes it was given when the document gets no longer, blanking what is left over', async (t) => {
  const raw = '{"a":"mail jane.doe@example.com now","n":1,"b":"call +1 415 555 0100 today","c":"tail"}';
  const { out, edited, bytes } = spliced(raw, [
    { path: ['b'], after: 'call [R:phone] today' },
    { path: ['a'], after: 'mail [R:email] now' },
  ]);
  t.ok(out !== null && writtenOver(out, bytes), 'a view of the same memory, no second copy of the body');
  t.equal(out!.toString('utf8'), '{"a":"mail [R:email] now","n":1,"b":"call [R:phone] today","c":"tail"}');
  t.same(JSON.parse(out!.toString('utf8')), edited);
  t.equal(bytes.subarray(out!.length).toString('latin1'), ' '.repeat(raw.length - out!.length), 'no byte of the old text is left past the end');
  // A replacement of the same length moves nothing.
  const same = spliced('{"x":"a@b.co","y":2}', [{ path: ['x'], after: '[R:e]!' }]);
  t.ok(writtenOver(same.out!, same.bytes));
  t.equal(same.out!.toString('utf8'), '{"x":"[R:e]!","y":2}');
});

t.test('a new buffer, and the bytes given left as they were, when an edit makes the document longer before another shortens it', async (t) => {
  // Written in place, the first (longer) token would run over the text between the two before it moved.
  const raw = '{"a":"x@y.co","between":"keep me","b":"a.much.longer.address@example.com"}';
  const { out, edited, bytes } = spliced(raw, [
    { path: ['a'], after: '[REDACTED:pii.email]' },
    { path: ['b'], after: '[R]' },
  ]);
  t.ok(out !== null && !writtenOver(out, bytes));
  t.same(JSON.parse(out!.toString('utf8')), edited);
  t.equal(bytes.toString('utf8'), raw, 'the bytes given are unchanged');
  const longer = spliced('{"a":"x@y.co"}', [{ path: ['a'], after: '[REDACTED:pii.email]' }]);
  t.ok(!writtenOver(longer.out!, longer.bytes));
  t.equal(longer.bytes.toString('utf8'), '{"a":"x@y.co"}');
  t.equal(longer.out!.toString('utf8'), '{"a":"[REDACTED:pii.email]"}');
});
