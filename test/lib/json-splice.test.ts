import t from 'tap';
import { spliceStrings, type StringEdit } from '../../src/lib/json-splice.js';

/** Parses `raw`, makes each edit where its text is found (a JSON path of keys), and splices. */
function spliced(raw: string, edits: Array<{ path: Array<string | number>; after: string }>): { out: Buffer | null; edited: unknown } {
  const edited = JSON.parse(raw) as unknown;
  const made: StringEdit[] = [];
  for (const { path, after } of edits) {
    let node = edited as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
    const last = path.at(-1)!;
    made.push({ before: node[last] as string, after });
    node[last] = after;
  }
  return { out: spliceStrings(Buffer.from(raw), edited, made), edited };
}

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
