import t from 'tap';
import { compareToBaseline, formatComparison, REGRESSION_THRESHOLD } from '../../bench/lib/baseline.js';

const machine = { cores: 2, cpuModel: 'cpu', nodeVersion: 'v20', platform: 'linux', memoryGiB: 24 };
const shape = { connections: 50, promptBytes: 1024, chunks: null };
const scenario = (name: string, cpuUsPerRequest: number | null, status: 'ok' | 'failed' = 'ok', extra: { ratio?: number; peakRssMiB?: number; chunks?: number; mockUs?: number } = {}) => ({
  name,
  description: name,
  status,
  shape: { ...shape, chunks: extra.chunks ?? null },
  ratio: extra.ratio ?? 0.25,
  sides: { direct: { cpuUsPerRequest: extra.mockUs ?? 10, peakRssMiB: 80 }, proxy: { cpuUsPerRequest, peakRssMiB: extra.peakRssMiB ?? 200 } },
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
  t.match(text, /chat\s+0\.250× → 0\.250×\s+100 →\s+121\s+\+21%\s+200 → 200\s+REGRESSION/);
  t.match(text, /latency\s+0\.250× → 0\.250×\s+50 →\s+20\s+-60%\s+200 → 200$/m);
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

t.test('before and after: the throughput ratio and peak RSS of both runs sit beside the CPU', async (t) => {
  const baseline = report([scenario('chat', 176, 'ok', { ratio: 0.174, peakRssMiB: 237 })]);
  const now = report([scenario('chat', 150, 'ok', { ratio: 0.2, peakRssMiB: 160 })]);
  const [row] = compareToBaseline(now, baseline).rows;
  t.match(row, { baselineRatio: 0.174, nowRatio: 0.2, baselineRssMiB: 237, nowRssMiB: 160, sameShape: true, regressed: false });
  t.match(formatComparison(compareToBaseline(now, baseline)), /chat\s+0\.174× → 0\.200×\s+176 →\s+150\s+-15%\s+237 → 160$/m);
});

t.test('a scenario the baseline ran with another shape is shown but never flagged', async (t) => {
  const baseline = report([scenario('stream', 100, 'ok', { chunks: 50 })]);
  const now = report([scenario('stream', 400, 'ok', { chunks: 20 })]);
  const [row] = compareToBaseline(now, baseline).rows;
  t.equal(row!.sameShape, false);
  t.equal(row!.regressed, false, 'a different request is not a regression');
  t.match(formatComparison(compareToBaseline(now, baseline)), /stream.*another shape: not compared/);
});

t.test('on a machine that runs the mock at another speed than the baseline did, no rise is flagged', async (t) => {
  const baseline = report([scenario('chat', 100), scenario('stream', 400), scenario('latency', 50)]);
  // The mock costs 2.2× what it did (one scenario's figure strays; the median decides): the machine is slower.
  const slower = report([scenario('chat', 250, 'ok', { mockUs: 22 }), scenario('stream', 880, 'ok', { mockUs: 21 }), scenario('latency', 50, 'ok', { mockUs: 9 })]);
  const comparison = compareToBaseline(slower, baseline);
  t.equal(comparison.judged, false);
  t.equal(comparison.machineSpeed, 2.1);
  t.same(comparison.rows.map((r) => r.regressed), [false, false, false]);
  const text = formatComparison(comparison);
  t.match(text, /the mock took 2\.10× its baseline CPU per request .* no rise is flagged; compare two builds in one run with --against/);
  t.match(text, /chat .*\+150%.*not flagged/);
  t.notMatch(text, /REGRESSION/);
  t.notMatch(text, /latency .*not flagged/, 'a figure that did not rise says nothing');
});

t.test('a mock within the tolerance of its baseline cost leaves the check on', async (t) => {
  const baseline = report([scenario('chat', 100), scenario('stream', 400)]);
  const now = report([scenario('chat', 130, 'ok', { mockUs: 11.5 }), scenario('stream', 400, 'ok', { mockUs: 11.5 })]);
  const comparison = compareToBaseline(now, baseline);
  t.equal(comparison.judged, true);
  t.equal(comparison.machineSpeed, 1.15);
  t.same(comparison.rows.map((r) => r.regressed), [true, false]);
  t.match(formatComparison(comparison), /chat .*REGRESSION/);
});

t.test("without the mock's figures on both sides the check stays on", async (t) => {
  const baseline = report([{ ...scenario('chat', 100), sides: { proxy: { cpuUsPerRequest: 100, peakRssMiB: 200 } } }]);
  const comparison = compareToBaseline(report([scenario('chat', 200, 'ok', { mockUs: 50 })]), baseline);
  t.equal(comparison.machineSpeed, null);
  t.equal(comparison.judged, true);
  t.equal(comparison.rows[0]!.regressed, true);
});
