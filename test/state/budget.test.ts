import t from 'tap';
import {
  DEFAULT_DAILY_CAP_USD,
  dailyCapUsd,
  estimateInputTokens,
  hardCapEnforced,
  nextUtcMidnight,
  nextUtcMonthStart,
  worstCaseCostUsd,
} from '../../src/state/budget.js';
import { HardCapExceededError } from '../../src/state/errors.js';
import { toMicros, toUsd } from '../../src/state/micros.js';
import { periodOf, secondsUntil } from '../../src/state/periods.js';

t.test('worst-case cost: all input plus the most output allowed, at per-1k rates', async (t) => {
  const usd = worstCaseCostUsd({ inputTokens: 1000, maxOutputTokens: 500, inputPer1k: 0.003, outputPer1k: 0.015 });
  t.equal(toMicros(usd, 'usd'), 10_500);
  t.equal(worstCaseCostUsd({ inputTokens: 0, maxOutputTokens: 0, inputPer1k: 1, outputPer1k: 1 }), 0);
});

t.test('input tokens are estimated at about 4 characters each, rounded up', async (t) => {
  t.equal(estimateInputTokens(''), 0);
  t.equal(estimateInputTokens('abcd'), 1);
  t.equal(estimateInputTokens('abcde'), 2);
  t.equal(estimateInputTokens('x'.repeat(4000)), 1000);
});

t.test('a workspace with no saved daily cap is held to $100', async (t) => {
  t.equal(DEFAULT_DAILY_CAP_USD, 100);
  t.equal(dailyCapUsd(undefined), 100);
  t.equal(dailyCapUsd(null), 100);
  t.equal(dailyCapUsd(0), 0);
  t.equal(dailyCapUsd(25), 25);
});

t.test('the hard cap needs enforcement_mode hard and workspace_hard_cap_enabled true', async (t) => {
  t.equal(hardCapEnforced({ enforcement_mode: 'hard', workspace_hard_cap_enabled: true }), true);
  t.equal(hardCapEnforced({ enforcement_mode: 'hard' }), false);
  t.equal(hardCapEnforced({ enforcement_mode: 'soft', workspace_hard_cap_enabled: true }), false);
  t.equal(hardCapEnforced({}), false);
});

t.test('UTC period boundaries', async (t) => {
  t.equal(nextUtcMidnight(Date.UTC(2026, 10, 21, 12)), Date.UTC(2026, 10, 22));
  t.equal(nextUtcMidnight(Date.UTC(2026, 10, 22)), Date.UTC(2026, 10, 23), 'at midnight, the next one');
  t.equal(nextUtcMonthStart(Date.UTC(2026, 11, 31, 23, 59)), Date.UTC(2027, 0, 1), 'across a year');
  t.equal(nextUtcMonthStart(Date.UTC(2028, 1, 29, 12)), Date.UTC(2028, 2, 1), 'leap February');
  t.match(periodOf(Date.UTC(2026, 10, 21, 23, 59, 59, 999)), { day: '2026-11-21', month: '2026-11', dayEndsAt: Date.UTC(2026, 10, 22), monthEndsAt: Date.UTC(2026, 11, 1) });
  t.match(periodOf(Date.UTC(2026, 10, 22)), { day: '2026-11-22' }, 'the cached period is not reused past its day');
  t.equal(secondsUntil(Date.UTC(2026, 10, 22), Date.UTC(2026, 10, 21, 23, 59, 59, 1)), 1);
  t.equal(secondsUntil(0, 10), 1, 'never less than one second');
});

t.test('amounts are integer micro-dollars', async (t) => {
  t.equal(toMicros(0.1 + 0.2, 'x'), 300_000);
  t.equal(toUsd(123_456), 0.123456);
  t.throws(() => toMicros(-0.01, 'amountUsd'), RangeError);
  t.throws(() => toMicros(Number.POSITIVE_INFINITY, 'amountUsd'), RangeError);
});

t.test('the refusal is a 429 OVERAGE_HARD_CAP_EXCEEDED with Retry-After', async (t) => {
  const err = new HardCapExceededError({ cap: 'daily', retryAfterSeconds: 3600 });
  t.match(err, { status: 429, code: 'OVERAGE_HARD_CAP_EXCEEDED', headers: { 'retry-after': '3600' } });
  t.match(err.message, /daily spend cap.*midnight UTC/);
  t.match(new HardCapExceededError({ cap: 'monthly', retryAfterSeconds: 5 }).message, /start of next month/);
});
