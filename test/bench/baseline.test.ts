import t from 'tap';
import { compareToBaseline, formatComparison, REGRESSION_THRESHOLD } from '../../bench/lib/baseline.js';

const machine = { cores: 2, cpuModel: 'cpu', nodeVersion: 'v20', platform: 'linux', memoryGiB: 24 };
const scenario = (name: string, cpuUsPerRequest: number | null, status: 'ok' | 'failed' = 'ok') => ({
  name,
  description: name,
  status,
  sides: { direct: { cpuUsPerRequest: 10 }, proxy: { cpuUsPerRequest } },
});
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const report = (scenarios: unknown[], m = machine): any => ({ machine: m, commit: 'c0ffee1', date: '2026-11-01T00:00:00.000Z', options: {}, scenarios, micro: [] });

t.test('a rise past the threshold is flagged, one within it is not', async (t) => {
  const baseline = report([scenario('chat', 100), scenario('stream', 400), scenario('latency', 50)]);
  const now = report([scenario('chat', 100 * (1 + REGRESSION_THRESHOLD) + 1), scenario('stream', 400 * (1 + REGRESSION_THRESHOLD)), scenario('latency', 20)]);
  const comparison = compareToBaseline(now, baseline);
  t.same(
    comparison.rows.map((r) => [r.scenario, r.regressed]),
    [
      ['chat', true],
      ['stream', false],
      ['latency', false],
    ],
  );
  t.equal(comparison.sameMachine, true);
  const text = formatComparison(comparison);
  t.match(text, /chat\s+100 →\s+121\s+\+21%\s+REGRESSION/);
  t.match(text, /latency\s+50 →\s+20\s+-60%$/m);
  t.notMatch(text, /stream.*REGRESSION/);
});

t.test('scenarios missing on either side, failed or without CPU figures are left out', async (t) => {
  const baseline = report([scenario('chat', 100), scenario('stream', null), scenario('tool-call', 80, 'failed')]);
  const now = report([scenario('chat', 90), scenario('stream', 300), scenario('tool-call', 500), scenario('new-one', 5)]);
  t.same(compareToBaseline(now, baseline).rows.map((r) => r.scenario), ['chat']);
  t.match(formatComparison(compareToBaseline(report([]), baseline)), /no scenario in common/);
});

t.test('a baseline from another machine says so', async (t) => {
  const comparison = compareToBaseline(report([scenario('chat', 100)]), report([scenario('chat', 100)], { ...machine, cores: 8 }));
  t.equal(comparison.sameMachine, false);
  t.match(formatComparison(comparison), /another machine/);
});
