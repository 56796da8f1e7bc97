import t from 'tap';
import { startMockProvider } from '../../bench/mock/provider.js';
import {
  CircuitBreaker,
  CircuitOpenError,
  SvcClient,
  SvcClientError,
  UpstreamFailureError,
  VerdictError,
  type BreakerTransition,
  type OpenAIMessage,
} from '../../src/client/index.js';
import { freePort } from '../helpers/ports.js';
import { startProxy } from '../helpers/proxy.js';

// Breakers around tasks that chat through a real proxy; the mock provider is scripted to fail.
// Time is the test's own clock: the cool-down passes when the test moves it, never by waiting.

t.setTimeout(300_000);

const CARD = '4539148803436467';
const mock = await startMockProvider();
t.teardown(() => mock.close());
// Retries off: each failing task is one failing upstream call, and nothing waits on a backoff.
const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { upstreamRetry: { enabled: false }, settings: { piiDetectors: { 'pii.card': 'block' } } } });

const ask: OpenAIMessage[] = [{ role: 'user', content: 'summarise the diff' }];
let keys = 0;
/** Headers that make the mock fail the first `times` requests carrying them (503), then answer. */
const failing = (times: number) => ({ 'x-mock-key': `breaker-${++keys}`, 'x-mock-fail-times': String(times), 'x-mock-status': '503' });

function setup(t: Tap.Test, baseUrl = proxy.url) {
  const clock = { now: 1_000_000 };
  const client = new SvcClient({ apiKey: 'sk-local-open-mode', baseUrl, env: {}, clock: () => clock.now });
  t.teardown(() => client.close());
  return { client, clock };
}

function transitions(breaker: CircuitBreaker<unknown>): BreakerTransition[] {
  const seen: BreakerTransition[] = [];
  breaker.onStateChange((tr) => seen.push(tr));
  return seen;
}

async function outcome<T>(p: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  try {
    return { value: await p };
  } catch (error) {
    return { error };
  }
}

t.test('opens after repeated upstream failures, stops tasks while open, closes after its cool-down', async (t) => {
  const { client, clock } = setup(t);
  const breaker = client.breaker<string>({ taskType: 'summarise', failureThreshold: 3, coolDownMs: 60_000 });
  const seen = transitions(breaker);
  const headers = failing(4);
  const task = () => breaker.run(async () => (await client.chat('gpt-4o-mini', ask, { headers })).text);

  for (let i = 1; i <= 3; i++) {
    const r = await outcome(task());
    t.type('error' in r && r.error, UpstreamFailureError, `failure ${i} is thrown as it is (fail closed)`);
    t.match('error' in r && r.error, { status: 503, code: 'upstream_failure' });
  }
  t.equal(breaker.state, 'open');
  t.match(seen, [{ taskType: 'summarise', from: 'closed', to: 'open', cause: { code: 'upstream_failure' } }]);

  const sent = mock.requests.length;
  const stopped = await outcome(task());
  t.type('error' in stopped && stopped.error, CircuitOpenError);
  t.match('error' in stopped && stopped.error, { code: 'circuit_open', taskType: 'summarise', retryAt: clock.now + 60_000, cause: { code: 'upstream_failure' } });
  t.equal(mock.requests.length, sent, 'an open breaker sends nothing');

  clock.now += 59_999;
  const early = await outcome(task());
  t.type('error' in early && early.error, CircuitOpenError, 'still open a millisecond before the cool-down ends');
  t.equal(breaker.state, 'open');
  t.equal(mock.requests.length, sent);

  clock.now += 1;
  // The trial reaches the mock, whose fourth scripted failure reopens the breaker.
  const trial = await outcome(task());
  t.type('error' in trial && trial.error, UpstreamFailureError);
  t.equal(breaker.state, 'open', 'a failed trial reopens it');
  t.equal(mock.requests.length, sent + 1, 'one trial went out');

  clock.now += 60_000;
  const recovered = await outcome(task());
  t.same(recovered, { value: 'Hello from the mock provider.' }, 'the mock answers again: the trial passes');
  t.equal(breaker.state, 'closed');
  t.same(
    seen.map((s) => `${s.from}->${s.to}`),
    ['closed->open', 'open->half_open', 'half_open->open', 'open->half_open', 'half_open->closed'],
  );
});

t.test('an unreachable gateway counts; failOpen runs the default action instead of the task', async (t) => {
  const { client, clock } = setup(t, `http://127.0.0.1:${await freePort()}`);
  const causes: SvcClientError[] = [];
  const breaker = client.breaker<string>({
    taskType: 'triage',
    failOpen: true,
    failureThreshold: 2,
    coolDownMs: 1_000,
    defaultAction: (cause) => {
      causes.push(cause);
      return 'skipped';
    },
  });
  let ran = 0;
  const task = () =>
    breaker.run(async () => {
      ran += 1;
      return (await client.chat('gpt-4o-mini', ask)).text;
    });
  t.equal(await task(), 'skipped');
  t.equal(await task(), 'skipped');
  t.equal(breaker.state, 'open');
  t.equal(await task(), 'skipped', 'open: the default action answers');
  t.equal(ran, 2, 'and the task did not run');
  t.same(
    causes.map((c) => c.code),
    ['gateway_unreachable', 'gateway_unreachable', 'circuit_open'],
  );
  clock.now += 1_000;
  t.equal(await task(), 'skipped', 'a failed trial fails open too');
  t.equal(ran, 3);
});

t.test('a policy verdict is never failed open and never counts against the gateway', async (t) => {
  const { client } = setup(t);
  const breaker = client.breaker<string>({ taskType: 'billing', failOpen: true, failureThreshold: 2, defaultAction: () => 'skipped' });
  const headers = failing(1);
  t.equal(await breaker.run(async () => (await client.chat('gpt-4o-mini', ask, { headers })).text), 'skipped', 'one upstream failure, failed open');
  const refused = await outcome(breaker.run(async () => (await client.chat('gpt-4o-mini', [{ role: 'user', content: `card ${CARD}` }])).text));
  t.type('error' in refused && refused.error, VerdictError, 'the verdict is thrown although the breaker fails open');
  t.equal(breaker.state, 'closed');
  // The verdict was the gateway answering: the failure before it no longer counts towards the threshold.
  t.equal(await breaker.run(async () => (await client.chat('gpt-4o-mini', ask, { headers: failing(1) })).text), 'skipped');
  t.equal(breaker.state, 'closed', 'one failure since the verdict: still closed');
});

t.test("an error event inside a stream counts; the task's own errors do not", async (t) => {
  const { client } = setup(t);
  const breaker = client.breaker<string>({ taskType: 'stream', failureThreshold: 2 });
  const seen = transitions(breaker);
  const own = await outcome(breaker.run(async () => Promise.reject(new Error('task bug'))));
  t.match('error' in own && own.error, { message: 'task bug' });
  const streamFailure = () => breaker.run(async () => (await client.stream('gpt-4o-mini', ask, { headers: { 'x-mock-stream-error': '1' } }).final()).text);
  const first = await outcome(streamFailure());
  t.type('error' in first && first.error, UpstreamFailureError);
  t.match('error' in first && first.error, { status: 200, message: /mock stream error/ });
  t.equal(breaker.state, 'closed');
  await outcome(streamFailure());
  t.equal(breaker.state, 'open');
  t.equal(seen.length, 1);
});

t.test('only one trial at a time while half open', async (t) => {
  let now = 0;
  const breaker = new CircuitBreaker<string>({ taskType: 'unit', failureThreshold: 1, coolDownMs: 10, clock: () => now });
  const failure = new UpstreamFailureError('down', { status: 503 });
  await outcome(breaker.run(() => Promise.reject(failure)));
  t.equal(breaker.state, 'open');
  now = 10;
  let release!: (v: string) => void;
  const trial = breaker.run(() => new Promise<string>((resolve) => (release = resolve)));
  t.equal(breaker.state, 'half_open');
  const second = await outcome(breaker.run(async () => 'second'));
  t.type('error' in second && second.error, CircuitOpenError, 'a second task waits for the trial’s verdict');
  release('first');
  t.equal(await trial, 'first');
  t.equal(breaker.state, 'closed');
  t.equal(await breaker.run(async () => 'third'), 'third');
});

t.test('options are checked', async (t) => {
  t.throws(() => new CircuitBreaker({ taskType: '' }), { code: 'invalid_options' });
  t.throws(() => new CircuitBreaker({ taskType: 'x', failOpen: true }), { code: 'invalid_options', message: /defaultAction/ });
  t.throws(() => new CircuitBreaker({ taskType: 'x', failureThreshold: 0 }), { code: 'invalid_options' });
  t.throws(() => new CircuitBreaker({ taskType: 'x', coolDownMs: -1 }), { code: 'invalid_options' });
});
