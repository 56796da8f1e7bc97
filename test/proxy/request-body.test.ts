import t from 'tap';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createLogger } from '../../src/lib/logger.js';
import { PolicyEngine } from '../../src/policy/engine.js';
import { buildPolicyConfig } from '../../src/policy/policy-config.js';
import { readRequestBody } from '../../src/proxy/request-body.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const CARD = '4539 1488 0343 6467';
const policy = buildPolicyConfig({ version: 'request-body', settings: {}, localPii: undefined, env: {} });

function engine(t: Tap.Test, inlineMaxBytes = 1024 * 1024): PolicyEngine {
  const e = new PolicyEngine({ threads: 1, inlineMaxBytes, logger: createLogger('silent') });
  t.teardown(() => e.close());
  return e;
}

const body = {
  model: 'gpt-4o-mini',
  stream: true,
  max_tokens: 64,
  metadata: { user: 'u-1' },
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: `charge my card ${CARD}` },
  ],
};

t.test('a body read on the main thread keeps its top-level scalars and the redacted bytes, and parses again when asked for whole', async (t) => {
  const raw = Buffer.from(JSON.stringify(body));
  const read = await readRequestBody(engine(t), raw, { policy, cacheKeyPrefix: null, wantsText: false });
  t.same(read.head, { model: 'gpt-4o-mini', stream: true, max_tokens: 64 }, 'no objects or arrays');
  t.equal(read.inspection.verdict, 'modified');
  t.notOk('body' in read.inspection, 'the inspection does not carry the redacted text');
  t.ok(Buffer.isBuffer(read.redacted));
  t.ok(read.redacted!.buffer === raw.buffer && read.redacted!.byteOffset === raw.byteOffset, 'written over the bytes read: no second copy of the body');
  const sent = JSON.parse(read.redacted!.toString('utf8')) as typeof body;
  t.equal(sent.messages[1]!.content, 'charge my card [REDACTED:pii.card]');
  const whole = read.whole();
  t.same(whole, sent, 'whole is the body as it will be sent');
  t.not(read.whole(), whole, 'parsed again each time, not kept');
});

t.test('nothing a read body holds keeps its parse alive while the request is in flight', async (t) => {
  const parse = JSON.parse;
  let parsed: WeakRef<object> | null = null;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    const value = parse(text, reviver) as unknown;
    if (parsed === null && typeof value === 'object' && value !== null) parsed = new WeakRef(value);
    return value;
  }) as typeof JSON.parse;
  t.teardown(() => {
    JSON.parse = parse;
  });
  const read = await readRequestBody(engine(t), Buffer.from(JSON.stringify(body)), { policy, cacheKeyPrefix: null, wantsText: true });
  JSON.parse = parse;
  t.ok(parsed !== null, 'the body was parsed here');
  // A WeakRef holds its target until the current job ends.
  await nextTurn();
  gc();
  t.equal(parsed!.deref(), undefined, 'the parse was collected');
  t.equal(read.inspection.anomaly?.fingerprint.length, 32, 'the session fingerprint is still there to read');
  t.same(read.head.model, 'gpt-4o-mini');
});

t.test('a body nested deeper than inspection can follow is refused as the sender\'s error, on either thread', async (t) => {
  const depth = 50_000;
  const deep = Buffer.from(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":${'['.repeat(depth)}"mail jane@example.com"${']'.repeat(depth)}}]}`);
  const options = { policy, cacheKeyPrefix: null, wantsText: false };
  await t.rejects(readRequestBody(engine(t), deep, options), { name: 'NestingTooDeepError', status: 400, code: 'nesting_too_deep' }, 'on the main thread');
  // A body past the inline size arrives in shared memory and is read in a worker.
  const shared = Buffer.from(new SharedArrayBuffer(deep.length));
  deep.copy(shared);
  await t.rejects(readRequestBody(engine(t, 0), shared, options), { name: 'NestingTooDeepError', status: 400, code: 'nesting_too_deep' }, 'in a worker');
});

t.test('a body past the inline size is read in a worker, as the main thread reads a small one, even when it is not in shared memory', async (t) => {
  const options = { policy, cacheKeyPrefix: 'k', wantsText: true };
  const raw = Buffer.from(JSON.stringify(body));
  // Read on the main thread, the redacted text is written over the bytes read (the placeholder is
  // no longer than the card): that read gets a copy.
  const here = await readRequestBody(engine(t), Buffer.from(raw), options);
  const workers = engine(t, 0);
  const parse = JSON.parse;
  let parsedHere = 0;
  JSON.parse = ((...args: Parameters<typeof parse>) => (parsedHere++, parse(...args))) as typeof JSON.parse;
  t.teardown(() => {
    JSON.parse = parse;
  });
  const there = await readRequestBody(workers, raw, options);
  JSON.parse = parse;
  t.equal(parsedHere, 0, 'not parsed on the main thread');
  t.equal(workers.state().completed, 1, 'one task ran in a worker');
  t.same(there.head, here.head);
  t.equal(there.cacheKey, here.cacheKey);
  t.equal(there.text, here.text);
  t.same(there.inspection.findings, here.inspection.findings);
  t.equal(there.inspection.verdict, 'modified');
  t.same(there.redacted, here.redacted, 'the same redacted bytes');
  t.same(JSON.parse(raw.toString('utf8')), body, 'the sender\'s bytes are left as they came: the worker read a copy in shared memory');
});
