import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUN = join(ROOT, 'bench/run.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `node bench/run.js …` in its own process group, so that the teardown can end the benchmark
 * and every process it started even if the test fails halfway.
 */
async function bench(t: Test, args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [RUN, ...args], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // the group is already gone
    }
  });
  const [code] = (await exited) as [number | null];
  return { code, stdout, stderr };
}

interface Side {
  server: string;
  requests: number;
  seconds: number;
  requestsPerSec: number;
  latencyMs: { p50: number; p90: number; p99: number };
  ttfbMs: { p50: number; p99: number };
  errors: { non2xx: number; failed: number; truncated: number };
  cpuUsPerRequest: number | null;
  peakRssMiB: number;
}

interface Scenario {
  name: string;
  status: string;
  reason?: string;
  ratio?: number | null;
  sides?: { direct: Side; proxy: Side };
  versus?: { scenario: string; build?: string; rounds: number; proxy: Side; requestsPerSec: Spread; cpuUsPerRequest: Spread | null; profile?: string };
  profile?: string;
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

interface Report {
  machine: { cores: number; nodeVersion: string };
  options: { durationS: number };
  scenarios: Scenario[];
  micro: unknown[];
  baseline: { commit: string | null; rows: Array<{ scenario: string; baselineUs: number; nowUs: number; regressed: boolean }> } | null;
}

t.test('a one-second chat run measures both sides and the proxy process', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const out = join(dir, 'results.json');
  // A baseline no real run can match: the chat scenario is flagged against it.
  const baseline = join(dir, 'baseline.json');
  const cheap = { name: 'chat', status: 'ok', sides: { proxy: { cpuUsPerRequest: 1 } } };
  await writeFile(baseline, JSON.stringify({ machine: { cores: 1, cpuModel: 'other' }, commit: 'abc1234', date: '2026-01-01T00:00:00.000Z', scenarios: [cheap], micro: [] }));

  const run = await bench(t, ['chat', '--duration', '1', '--warmup', '0.5', '--connections', '4', '--json-only', '--out', out, '--baseline', baseline]);
  t.equal(run.code, 0, run.stderr);

  const printed = JSON.parse(run.stdout) as Report;
  const written = JSON.parse(await readFile(out, 'utf8')) as Report;
  t.same(written, printed, 'the file holds what was printed');
  t.equal(printed.machine.nodeVersion, process.version);
  t.ok(printed.machine.cores > 0);
  t.equal(printed.options.durationS, 1);
  t.same(printed.micro, [], 'naming a scenario runs no micro-benchmark');

  t.equal(printed.scenarios.length, 1);
  const chat = printed.scenarios[0]!;
  t.equal(chat.name, 'chat');
  t.equal(chat.status, 'ok', chat.reason ?? 'ran');
  t.ok(typeof chat.ratio === 'number' && Number.isFinite(chat.ratio) && chat.ratio > 0, `ratio ${chat.ratio} is a positive finite number`);
  for (const [name, side] of Object.entries(chat.sides ?? {})) {
    t.ok(side.requests > 0 && side.requestsPerSec > 0, `${name}: requests/s ${side.requestsPerSec}`);
    t.same(side.errors, { non2xx: 0, failed: 0, truncated: 0 }, `${name}: no errors`);
    t.ok(side.latencyMs.p50 > 0 && side.latencyMs.p50 <= side.latencyMs.p90 && side.latencyMs.p90 <= side.latencyMs.p99, `${name}: percentiles in order`);
    t.ok(side.ttfbMs.p50 > 0 && side.ttfbMs.p50 <= side.latencyMs.p99, `${name}: time to first byte`);
    t.ok(side.cpuUsPerRequest !== null && side.cpuUsPerRequest > 0, `${name}: CPU µs per request ${side.cpuUsPerRequest}`);
    t.ok(side.peakRssMiB > 10, `${name}: peak RSS ${side.peakRssMiB} MiB`);
  }
  t.same(Object.keys(chat.sides ?? {}), ['direct', 'proxy']);
  t.same([chat.sides?.direct.server, chat.sides?.proxy.server], ['mock provider', 'proxy']);
  t.equal(printed.baseline?.commit, 'abc1234', 'compared with the baseline given');
  t.match(printed.baseline?.rows, [{ scenario: 'chat', baselineUs: 1, regressed: true }], 'a rise past 20% is flagged');
});

t.test("a pass-through scenario measures the stack's own pass-through on the proxy side, in turn with the proxy", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const run = await bench(t, ['latency-pass-through', '--duration', '1', '--warmup', '0', '--rounds', '2', '--prof', '--json-only', '--out', join(dir, 'out.json')]);
  t.equal(run.code, 0, run.stderr);
  const scenario = (JSON.parse(run.stdout) as Report).scenarios[0]!;
  // --prof: the other scenario's proxy, loaded in turn, is profiled too; the pass-through is not ours to profile.
  const profile = scenario.versus?.profile ?? '';
  if (profile !== '') t.teardown(() => rm(join(ROOT, profile), { force: true }));
  t.equal(scenario.profile, undefined);
  t.match(profile, /^bench\/results\/proxy-latency-pass-through-versus-latency-.+\.cpuprofile$/);
  t.ok((JSON.parse(await readFile(join(ROOT, profile), 'utf8')) as { nodes: unknown[] }).nodes.length > 0, 'a CPU profile');
  t.equal(scenario.status, 'ok', scenario.reason ?? 'ran');
  const versus = scenario.versus;
  const sides = { ...scenario.sides, versus: versus?.proxy };
  for (const [name, side] of Object.entries(sides)) {
    t.ok(side !== undefined && side.requests > 0, `${name}: ${side?.requests} requests`);
    t.same(side?.errors, { non2xx: 0, failed: 0, truncated: 0 }, `${name}: no errors`);
  }
  t.same([scenario.sides?.direct.server, scenario.sides?.proxy.server], ['mock provider', 'pass-through'], 'the pass-through stands where the proxy would');
  t.equal(versus?.scenario, 'latency', "latency's proxy is loaded in turn with it");
  t.equal(versus?.proxy.server, 'proxy');
  t.equal(versus?.rounds, 2);
  for (const figure of [versus?.requestsPerSec, versus?.cpuUsPerRequest]) {
    t.ok(figure !== undefined && figure !== null && figure.min > 0 && figure.min <= figure.median && figure.median <= figure.max, `a spread of round ratios: ${JSON.stringify(figure)}`);
  }
  // Two windows of half the duration each side: the merged side adds them up (a busy machine's timers may run late, never early).
  const seconds = scenario.sides?.proxy.seconds ?? 0;
  t.ok(seconds >= 0.95 && seconds < 5, `the pass-through was measured for ${seconds} s in all, two windows of 0.5 s`);
  t.match(run.stderr, /latency-pass-through: its proxy and latency's in turn, 2 rounds: req\/s [\d.]+× \([\d.]+–[\d.]+\), CPU µs\/req [\d.]+×/);
});

t.test('--fail-on-regression exits 3 when a scenario is flagged; --save-baseline writes the run as the baseline', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const baseline = join(dir, 'baseline.json');
  const cheap = { name: 'chat', status: 'ok', sides: { proxy: { cpuUsPerRequest: 1 } } };
  await writeFile(baseline, JSON.stringify({ machine: { cores: 1, cpuModel: 'other' }, commit: null, date: '2026-01-01T00:00:00.000Z', scenarios: [cheap], micro: [] }));
  const flagged = await bench(t, ['chat', '--duration', '0.5', '--warmup', '0', '--connections', '2', '--out', join(dir, 'a.json'), '--baseline', baseline, '--fail-on-regression']);
  t.equal(flagged.code, 3, flagged.stderr);
  t.match(flagged.stdout, /chat\s+n\/a → [\d.]+×\s+1 →\s+\d+\s+\+\d+%\s+n\/a → \d+\s+REGRESSION/);

  const saved = await bench(t, ['chat', '--duration', '0.5', '--warmup', '0', '--connections', '2', '--out', join(dir, 'b.json'), '--baseline', baseline, '--save-baseline']);
  t.equal(saved.code, 0, saved.stderr);
  const written = JSON.parse(await readFile(baseline, 'utf8')) as Report;
  t.ok((written.scenarios[0]?.sides?.proxy.cpuUsPerRequest ?? 0) > 1, 'the baseline now holds this run');
});

t.test('unknown names are refused with the list of known ones', async (t) => {
  const run = await bench(t, ['no-such-scenario']);
  t.equal(run.code, 2);
  t.match(run.stderr, /unknown name no-such-scenario; choose from .*chat.*dlp-100k.*sse-framer/);
});

t.test('--against loads a scenario\'s proxy in turn with another checkout\'s build of it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // This checkout against itself: the two sides run the same build.
  const run = await bench(t, ['chat', '--against', ROOT, '--duration', '1', '--warmup', '0', '--rounds', '2', '--connections', '2', '--json-only', '--out', join(dir, 'out.json')]);
  t.equal(run.code, 0, run.stderr);
  const scenario = (JSON.parse(run.stdout) as Report).scenarios[0]!;
  t.equal(scenario.status, 'ok', scenario.reason ?? 'ran');
  t.match(scenario.versus, { scenario: 'chat', build: '.', rounds: 2 });
  t.ok((scenario.versus?.proxy.requests ?? 0) > 0, 'the other build served requests');
  t.match(run.stderr, /chat: its proxy and the one built in \. in turn, 2 rounds: req\/s [\d.]+×/);

  const passThrough = await bench(t, ['chat-pass-through', '--against', ROOT]);
  t.equal(passThrough.code, 2);
  t.match(passThrough.stderr, /--against compares two builds of the proxy; chat-pass-through measures a pass-through instead/);
  const unbuilt = await bench(t, ['chat', '--against', dir]);
  t.equal(unbuilt.code, 2);
  t.match(unbuilt.stderr, /--against .*: no dist\/cli\/main\.js there; build that checkout with npm run build/);
});
