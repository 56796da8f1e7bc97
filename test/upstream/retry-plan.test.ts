import t from 'tap';
import {
  DEFAULT_RETRY,
  attemptTargets,
  attemptsPerTarget,
  backoffMs,
  budgetLeftMs,
  effectiveRetry,
  isRetryableError,
  isRetryableStatus,
  type RetrySettings,
} from '../../src/upstream/retry-plan.js';

const settings = (over: Partial<RetrySettings> = {}): RetrySettings => ({ ...DEFAULT_RETRY, ...over });

t.test('defaults', async (t) => {
  t.same(effectiveRetry(undefined, undefined), DEFAULT_RETRY, 'nothing set anywhere');
  t.same(effectiveRetry(undefined, null), DEFAULT_RETRY);
  t.ok(Object.isFrozen(DEFAULT_RETRY));
  t.ok(DEFAULT_RETRY.enabled);
  t.ok(DEFAULT_RETRY.onStatus.includes(429) && DEFAULT_RETRY.onStatus.includes(529));
  t.notOk(DEFAULT_RETRY.onStatus.includes(501), 'not implemented is not transient');
});

t.test('workspace fields override local fields override defaults, field by field', async (t) => {
  const local = { maxAttempts: 3, initialBackoffMs: 100, budgetMs: 10_000 };
  const merged = effectiveRetry(local, { maxAttempts: 5, onStatus: [503] });
  t.same(merged, { ...DEFAULT_RETRY, maxAttempts: 5, initialBackoffMs: 100, budgetMs: 10_000, onStatus: [503] });
  t.same(effectiveRetry(local, {}), { ...DEFAULT_RETRY, ...local }, 'an empty workspace object changes nothing');
  t.same(effectiveRetry(local, null), { ...DEFAULT_RETRY, ...local }, 'null (cleared) leaves the local values');
  t.same(effectiveRetry(local, undefined), { ...DEFAULT_RETRY, ...local }, 'absent leaves the local values');
  t.equal(effectiveRetry({ enabled: true }, { enabled: false }).enabled, false, 'false overrides');
  t.equal(effectiveRetry({ budgetMs: 5_000 }, { budgetMs: 0 }).budgetMs, 0, 'zero overrides');
  t.same(effectiveRetry({ onStatus: [500] }, { onStatus: [] }).onStatus, [], 'an empty list overrides');
  t.equal(effectiveRetry({ maxAttempts: undefined }, undefined).maxAttempts, DEFAULT_RETRY.maxAttempts, 'an undefined local field is not a value');
});

t.test('fallbacks are replaced whole, not merged per model', async (t) => {
  const merged = effectiveRetry({ fallbacks: { a: [{ model: 'b' }], c: [{ model: 'd' }] } }, { fallbacks: { a: [{ model: 'e' }] } });
  t.same(merged.fallbacks, { a: [{ model: 'e' }] });
});

t.test('attemptTargets: the requested model, then its fallbacks in order', async (t) => {
  const s = settings({
    fallbacks: {
      'gpt-4o': [{ model: 'gpt-4o-mini' }, { provider: 'azure' }, { model: 'claude-sonnet-4', provider: 'anthropic' }, { provider: 'groq', model: 'llama-3.3-70b-versatile' }],
    },
  });
  t.same(attemptTargets('gpt-4o', s), [
    { model: 'gpt-4o', provider: undefined },
    { model: 'gpt-4o-mini', provider: undefined },
    { model: 'gpt-4o', provider: 'azure_openai' },
    { model: 'claude-sonnet-4', provider: 'anthropic' },
    { model: 'llama-3.3-70b-versatile', provider: 'groq' },
  ]);
  t.same(attemptTargets('o3', s), [{ model: 'o3', provider: undefined }], 'a model without fallbacks');
  t.same(attemptTargets('gpt-4o-2024-08-06', s), [{ model: 'gpt-4o-2024-08-06', provider: undefined }], 'fallbacks are keyed by the exact id');
});

t.test('attemptTargets: aliases, ids, unknown providers and repeats', async (t) => {
  const s = settings({
    fallbacks: {
      m: [
        { provider: 'bedrock' },
        { provider: 'aws_bedrock' },
        { provider: 'vertex' },
        { provider: 'openrouter' },
        { provider: 'Azure' },
        { model: 'm' },
        { model: 'n' },
        { model: 'n' },
      ],
    },
  });
  t.same(attemptTargets('m', s), [
    { model: 'm', provider: undefined },
    { model: 'm', provider: 'aws_bedrock' },
    { model: 'm', provider: 'google_vertex' },
    { model: 'n', provider: undefined },
  ], 'an alias and its id are one target; an unknown provider and the requested model itself are skipped');
});

t.test('attemptTargets: retries off means the requested model only; prototype keys are not fallbacks', async (t) => {
  const s = settings({ enabled: false, fallbacks: { m: [{ model: 'n' }] } });
  t.same(attemptTargets('m', s), [{ model: 'm', provider: undefined }]);
  t.same(attemptTargets('constructor', settings()), [{ model: 'constructor', provider: undefined }]);
  t.same(attemptTargets('__proto__', settings()), [{ model: '__proto__', provider: undefined }]);
});

t.test('attemptsPerTarget', async (t) => {
  t.equal(attemptsPerTarget(settings({ maxAttempts: 4 })), 4);
  t.equal(attemptsPerTarget(settings({ maxAttempts: 4, enabled: false })), 1);
});

t.test('budgetLeftMs counts from the first attempt and stops at zero', async (t) => {
  const s = settings({ budgetMs: 1_000 });
  t.equal(budgetLeftMs(s, 5_000, 5_000), 1_000);
  t.equal(budgetLeftMs(s, 5_000, 5_400), 600);
  t.equal(budgetLeftMs(s, 5_000, 6_000), 0);
  t.equal(budgetLeftMs(s, 5_000, 9_000), 0);
});

t.test('backoff: exponential ceiling, capped, full jitter', async (t) => {
  const s = settings({ initialBackoffMs: 100, maxBackoffMs: 1_000, budgetMs: 120_000 });
  const top = () => 0.999999;
  const bottom = () => 0;
  const at = (retry: number, random: () => number) => backoffMs(retry, s, undefined, 0, 0, random);
  t.same([1, 2, 3, 4, 5, 6].map((r) => at(r, top)), [99, 199, 399, 799, 999, 999], 'doubles from initialBackoffMs up to maxBackoffMs');
  t.same([1, 2, 5].map((r) => at(r, bottom)), [0, 0, 0], 'full jitter reaches zero');
  t.equal(at(3, () => 0.5), 200);
  for (let i = 0; i < 200; i++) {
    const d = backoffMs(3, s, undefined, 0, 0)!;
    t.ok(d >= 0 && d < 400 && Number.isInteger(d), `jitter within [0, 400): ${d}`);
  }
  t.equal(backoffMs(100, s, undefined, 0, 0, top), 999, 'a huge retry number stays at the cap');
  t.equal(backoffMs(2_000, settings({ initialBackoffMs: 0 }), undefined, 0, 0, top), 0, 'zero initial backoff never sleeps');
  t.equal(backoffMs(1, settings({ initialBackoffMs: 5_000, maxBackoffMs: 1_000 }), undefined, 0, 0, top), 999, 'the cap wins over a larger initial value');
});

t.test('backoff: retry-after in seconds wins over the computed delay and the cap', async (t) => {
  const s = settings({ initialBackoffMs: 100, maxBackoffMs: 1_000, budgetMs: 60_000 });
  t.equal(backoffMs(1, s, '3', 0, 0, () => 0), 3_000);
  t.equal(backoffMs(1, s, ' 0 ', 0, 0, () => 0.9), 0, 'zero: retry at once');
  t.equal(backoffMs(1, s, '1.5', 0, 0), 1_500, 'fractional seconds');
  t.equal(backoffMs(1, s, '-5', 0, 0, () => 0.5), 50, 'an unreadable value is ignored');
  t.equal(backoffMs(1, s, 'soon', 0, 0, () => 0.5), 50);
  t.equal(backoffMs(1, s, '', 0, 0, () => 0.5), 50);
});

t.test('backoff: retry-after as an HTTP date', async (t) => {
  const s = settings({ budgetMs: 60_000 });
  const now = Date.parse('2025-06-01T12:00:00Z');
  t.equal(backoffMs(1, s, 'Sun, 01 Jun 2025 12:00:07 GMT', now, now), 7_000);
  t.equal(backoffMs(1, s, 'Sunday, 01-Jun-25 12:00:02 GMT', now, now), 2_000, 'the obsolete RFC 850 form');
  t.equal(backoffMs(1, s, 'Sun, 01 Jun 2025 11:59:00 GMT', now, now), 0, 'a date in the past: retry at once');
});

t.test('backoff never sleeps past the budget', async (t) => {
  const s = settings({ initialBackoffMs: 1_000, maxBackoffMs: 1_000, budgetMs: 5_000 });
  t.equal(backoffMs(1, s, '4', 0, 0), 4_000, 'fits');
  t.equal(backoffMs(1, s, '5', 0, 0), undefined, 'a retry-after of the whole budget leaves nothing for the retry');
  t.equal(backoffMs(1, s, '60', 0, 0), undefined, 'a long retry-after moves on instead of waiting');
  t.equal(backoffMs(1, s, '2', 3_500, 0), undefined, 'counted from the first attempt');
  t.equal(backoffMs(1, s, '1', 3_500, 0), 1_000);
  t.equal(backoffMs(1, s, undefined, 4_500, 0, () => 0.9), undefined, 'the computed delay too');
  t.equal(backoffMs(1, s, undefined, 4_500, 0, () => 0.2), 200);
  t.equal(backoffMs(1, s, undefined, 5_000, 0, () => 0), undefined, 'a spent budget allows no retry, not even at once');
  t.equal(backoffMs(1, settings({ budgetMs: 0 }), '0', 0, 0), undefined, 'budget zero: no retries');
});

t.test('retryable statuses follow onStatus', async (t) => {
  for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) t.ok(isRetryableStatus(status, DEFAULT_RETRY), `${status}`);
  for (const status of [400, 401, 403, 404, 413, 422, 501, 505]) t.notOk(isRetryableStatus(status, DEFAULT_RETRY), `${status}`);
  const custom = settings({ onStatus: [404] });
  t.ok(isRetryableStatus(404, custom));
  t.notOk(isRetryableStatus(429, custom), 'onStatus replaces the defaults');
  t.notOk(isRetryableStatus(503, settings({ onStatus: [] })));
});

t.test('retryable transport errors', async (t) => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']) {
    t.ok(isRetryableError(code), code);
  }
  for (const code of ['UND_ERR_BODY_TIMEOUT', 'ENOTFOUND', 'UND_ERR_ABORTED', 'CERT_HAS_EXPIRED', 'econnrefused', '']) {
    t.notOk(isRetryableError(code), code || '(empty)');
  }
});
