import t from 'tap';
import { compareInTurn, describeVersus, inTurn, mergeWindows, versusLabel } from '../../bench/lib/paired.js';
import { SCENARIOS, versusOf } from '../../bench/lib/scenarios.js';

function side(requests: number, seconds: number, cpuUsPerRequest: number | null, p50: number, rss = 100) {
  return {
    server: 'proxy',
    requests,
    seconds,
    requestsPerSec: requests / seconds,
    latencyMs: { p50, p90: p50 * 2, p99: p50 * 4 },
    ttfbMs: { p50, p90: p50 * 2, p99: p50 * 4 },
    errors: { non2xx: 1, failed: 0, truncated: 0 },
    errorSamples: ['HTTP 500: x'],
    cpuUsPerRequest,
    peakRssMiB: rss,
  };
}

t.test('rounds alternate which server goes first, so a drift in time falls on both alike', async (t) => {
  const order: string[] = [];
  const windows = await inTurn(
    4,
    async (round: number) => (order.push(`ours${round}`), `o${round}`),
    async (round: number) => (order.push(`theirs${round}`), `t${round}`),
  );
  t.same(order, ['ours0', 'theirs0', 'theirs1', 'ours1', 'ours2', 'theirs2', 'theirs3', 'ours3']);
  t.same(windows, { ours: ['o0', 'o1', 'o2', 'o3'], theirs: ['t0', 't1', 't2', 't3'] });
});

t.test('windows of one server merge: counts added, rates over the whole time, CPU over every request', (t) => {
  const merged = mergeWindows([side(100, 1, 10, 1, 90), side(300, 1, 30, 3, 120), side(200, 2, 20, 2, 100)]);
  t.equal(merged.requests, 600);
  t.equal(merged.seconds, 4);
  t.equal(merged.requestsPerSec, 150);
  t.equal(merged.cpuUsPerRequest, 23.3, "(100 × 10 + 300 × 30 + 200 × 20) ÷ 600, to a tenth");
  t.same(merged.latencyMs, { p50: 2, p90: 4, p99: 8 }, 'each percentile is the median of the windows');
  t.same(merged.errors, { non2xx: 3, failed: 0, truncated: 0 });
  t.same(merged.errorSamples, ['HTTP 500: x'], 'samples are not repeated');
  t.equal(merged.peakRssMiB, 120);
  const one = side(1, 1, 1, 1);
  t.equal(mergeWindows([one]), one, 'one window is itself');
  t.throws(() => mergeWindows([]));
  t.end();
});

t.test('the comparison is the median of the rounds’ own ratios, with their range', (t) => {
  const ours = [side(80, 1, 120, 1), side(40, 1, 240, 1), side(90, 1, 110, 1)];
  const theirs = [side(100, 1, 100, 1), side(50, 1, 200, 1), side(100, 1, 100, 1)];
  const versus = compareInTurn({ scenario: 'tool-call' }, ours, theirs);
  t.equal(versus.scenario, 'tool-call');
  t.equal(versus.build, undefined, 'this checkout built both');
  t.equal(versus.rounds, 3);
  t.same(versus.requestsPerSec, { median: 0.8, min: 0.8, max: 0.9 }, 'a slow round slows both, and its ratio stays');
  t.same(versus.cpuUsPerRequest, { median: 1.2, min: 1.1, max: 1.2 });
  t.equal(versus.proxy.requests, 250, 'the other server merged over the same rounds');
  t.equal(describeVersus(versus), "its proxy and tool-call's in turn, 3 rounds: req/s 0.800× (0.800–0.900), CPU µs/req 1.200× (1.100–1.200)");
  t.equal(versusLabel(versus), "tool-call's proxy");
  const idle = compareInTurn({ scenario: 'chat' }, [side(0, 1, null, 1)], [side(10, 1, 5, 1)]);
  t.equal(idle.cpuUsPerRequest, null, 'a round without requests has no CPU ratio');
  const builds = compareInTurn({ scenario: 'chat', build: '../old' }, ours, theirs);
  t.equal(builds.build, '../old');
  t.equal(versusLabel(builds), 'the proxy built in ../old');
  t.match(describeVersus(builds), /^its proxy and the one built in \.\.\/old in turn, 3 rounds: req\/s 0\.800×/);
  t.end();
});

t.test('every scenario compared in turn names one that sends the same request', (t) => {
  const compared = SCENARIOS.filter((s: { versus?: string }) => s.versus !== undefined);
  t.ok(compared.length >= 5);
  for (const scenario of compared) t.doesNotThrow(() => versusOf(scenario), scenario.name);
  t.throws(() => versusOf({ ...compared[0], versus: 'dlp-100k' }), /sends another request/);
  t.throws(() => versusOf({ ...compared[0], versus: 'nothing' }), /no scenario/);
  t.end();
});
