// @ts-check
/**
 * `npm run bench`: every speed figure of the proxy from one command. Each scenario loads the
 * mock provider directly, then through the proxy, in the same run; micro-benchmarks follow.
 * See bench/README.md and `npm run bench -- --help`.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killChildrenOnExit, startServer } from './lib/children.js';
import { startRedis } from './lib/redis.js';
import { runLoad } from './lib/load-generator.js';
import { parseOptions, selectWork, usage, UsageError } from './lib/options.js';
import { cpuTimeUs, peakRssBytes } from './lib/proc-stats.js';
import { compareToBaseline, formatComparison, readBaseline } from './lib/baseline.js';
import { formatReport, gitCommit, machine, writeReport } from './lib/report.js';
import { compareInTurn, describeVersus, inTurn, mergeWindows, versusLabel } from './lib/paired.js';
import { shapeOf, versusOf } from './lib/scenarios.js';
import { installedRulesDir } from './lib/wasm-rules.js';
import { round } from './lib/numbers.js';
import { PII_REDACTING } from './lib/policy.js';

/** @typedef {import('./lib/options.js').BenchOptions} BenchOptions */
/** @typedef {import('./lib/children.js').Server} Server */
/** @typedef {import('./lib/report.js').ScenarioResult} ScenarioResult */
/** @typedef {import('./lib/report.js').SideFigures} SideFigures */
/** @typedef {Omit<import('./lib/load-generator.js').LoadConfig, 'url'>} Load */
/** @typedef {import('./lib/scenarios.js').Scenario} Scenario */

/** Warm-up of a server's later windows in turn: enough to open the connections again. */
const LATER_WARMUP_S = 0.25;

const MOCK_SCRIPT = fileURLToPath(new URL('mock/provider.js', import.meta.url));
const PASS_THROUGH_SCRIPT = fileURLToPath(new URL('yardstick/pass-through.js', import.meta.url));
const PROXY_CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('results/', import.meta.url));
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * @param {string[]} args
 * @returns {Promise<number>} the exit code
 */
async function main(args) {
  const options = parseOptions(args);
  if (options.help) {
    process.stdout.write(usage());
    return 0;
  }
  const work = selectWork(options.names, options.against);
  killChildrenOnExit();
  const date = new Date().toISOString();
  const svcHome = temporaryDir('svc-bench-');

  /** @type {ScenarioResult[]} */
  const scenarios = [];
  for (const scenario of work.scenarios) scenarios.push(await runScenario(scenario, options, { svcHome, stamp: date.replaceAll(':', '-') }));
  /** @type {import('./lib/report.js').MicroResult[]} */
  const micro = [];
  for (const benchmark of work.micro) micro.push(await runMicro(benchmark));

  const report = { machine: machine(), commit: gitCommit(), date, options, scenarios, micro };
  const baseline = await readBaseline(options.baseline);
  const comparison = baseline === null ? null : compareToBaseline(report, baseline);
  await writeReport(options.out, { ...report, baseline: comparison });
  if (options.saveBaseline) await writeReport(options.baseline, report);
  const compared = scenarios.length === 0 ? '' : comparison === null ? `no baseline at ${displayPath(options.baseline)}\n` : `${formatComparison(comparison)}\n`;
  process.stdout.write(
    options.jsonOnly
      ? `${JSON.stringify({ ...report, baseline: comparison }, null, 2)}\n`
      : `${formatReport(report)}\n${compared}\nresults: ${displayPath(options.out)}${options.saveBaseline ? `; saved as the baseline` : ''}\n`,
  );
  if ([...scenarios, ...micro].some((result) => result.status === 'failed')) return 1;
  return options.failOnRegression && comparison?.rows.some((row) => row.regressed) ? 3 : 0;
}

/**
 * A fresh mock and a fresh proxy per scenario, so each one's peak RSS is the scenario's own. A
 * scenario that names another (`versus`) also starts that one's proxy and loads the two in turn
 * (bench/lib/paired.js).
 * @param {import('./lib/scenarios.js').Scenario} scenario
 * @param {BenchOptions} options
 * @param {{ svcHome: string, stamp: string }} run
 * @returns {Promise<ScenarioResult>}
 */
async function runScenario(scenario, options, run) {
  const { name, description } = scenario;
  const shape = shapeOf(scenario, options.overrides);
  const request = scenario.request(shape);
  /** @type {(warmupS: number, durationS: number) => Load} */
  const load = (warmupS, durationS) => ({ request, connections: shape.connections, warmupMs: warmupS * 1000, durationMs: durationS * 1000 });
  const other = opponentOf(scenario, options.against);
  /** @type {(slug: string | null, s: Scenario) => string | undefined} */
  const profileOf = (slug, s) => (options.prof && s.through === undefined ? join(RESULTS_DIR, `proxy-${name}${slug === null ? '' : `-versus-${slug}`}-${run.stamp}.cpuprofile`) : undefined);
  const profile = profileOf(null, scenario);
  const theirProfile = other === null ? undefined : profileOf(other.slug, other.scenario);
  progress(`${name}: ${description}, ${shape.connections} connections${other === null ? '' : `; its proxy and ${versusLabel(other.versus)} in turn, ${options.rounds} round${options.rounds === 1 ? '' : 's'}`}`);
  try {
    const redis = scenario.store === 'redis' || other?.scenario.store === 'redis' ? await startRedis() : null;
    /** @type {(s: Scenario, mockUrl: string, svcHome: string, profiled?: string, cli?: string) => Promise<Server>} */
    const startThrough = async (s, mockUrl, svcHome, profiled, cli = PROXY_CLI) => {
      if (s.through === 'pass-through') return startPassThrough(mockUrl);
      const wasmDir = s.wasmRules === undefined ? undefined : await installedRulesDir(s.wasmRules, svcHome);
      return startProxy(cli, mockUrl, options, svcHome, profiled, s.ioThreads ?? 1, redis?.url, wasmDir);
    };
    const measured = await withServer(startMock(), async (mock) => {
      const direct = await runSide(mock, load(options.warmupS, options.durationS));
      if (other === null) {
        const proxy = await withServer(startThrough(scenario, mock.url, run.svcHome, profile), (server) => runSide(server, load(options.warmupS, options.durationS)));
        return { sides: { direct, proxy }, versus: undefined };
      }
      const theirHome = join(run.svcHome, `versus-${other.slug}`);
      mkdirSync(theirHome, { recursive: true });
      return withServer(startThrough(scenario, mock.url, run.svcHome, profile), (ours) =>
        withServer(startThrough(other.scenario, mock.url, theirHome, theirProfile, other.cli), async (theirs) => {
          const window = options.durationS / options.rounds;
          /** @type {(server: Server) => (round: number) => Promise<SideFigures>} */
          const measure = (server) => (round) => runSide(server, load(round === 0 ? options.warmupS : Math.min(options.warmupS, LATER_WARMUP_S), window));
          const windows = await inTurn(options.rounds, measure(ours), measure(theirs));
          return { sides: { direct, proxy: mergeWindows(windows.ours) }, versus: compareInTurn(other.versus, windows.ours, windows.theirs) };
        }),
      );
    }).finally(() => redis?.stop());
    const { sides, versus } = measured;
    const ratio = sides.direct.requestsPerSec > 0 ? round(sides.proxy.requestsPerSec / sides.direct.requestsPerSec, 4) : null;
    progress(`${name}: direct ${Math.round(sides.direct.requestsPerSec)} req/s, proxy ${Math.round(sides.proxy.requestsPerSec)} req/s, ratio ${ratio}`);
    if (versus !== undefined) progress(`${name}: ${describeVersus(versus)}`);
    const profiled = written(name, profile);
    const versusProfiled = other === null ? undefined : written(`${name} (${versusLabel(other.versus)})`, theirProfile);
    return {
      name,
      description,
      status: 'ok',
      shape,
      sides,
      ratio,
      ...(versus === undefined ? {} : { versus: { ...versus, ...(versusProfiled === undefined ? {} : { profile: versusProfiled }) } }),
      ...(profiled === undefined ? {} : { profile: profiled }),
    };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    progress(`${name}: failed, ${reason}`);
    return { name, description, status: 'failed', reason };
  }
}

/**
 * Loads one server, the mock (direct) or the proxy, and reads that server's CPU time over the
 * measured window and its peak RSS. The same function runs both sides.
 * @param {Server} server
 * @param {Load} load
 * @returns {Promise<SideFigures>}
 */
async function runSide(server, load) {
  let cpuAtStart = 0;
  let cpuUs = 0;
  const result = await runLoad(
    { url: server.url, ...load },
    {
      onWindowStart: () => {
        cpuAtStart = cpuTimeUs(server.pid);
      },
      onWindowEnd: () => {
        cpuUs = cpuTimeUs(server.pid) - cpuAtStart;
      },
    },
  );
  if (!server.running()) throw new Error(`the ${server.name} died during the run\n${server.stderrTail()}`);
  return {
    server: server.name,
    ...result,
    requestsPerSec: round(result.requestsPerSec, 1),
    cpuUsPerRequest: result.requests > 0 ? round(cpuUs / result.requests, 1) : null,
    peakRssMiB: round(peakRssBytes(server.pid) / 2 ** 20, 1),
  };
}

/**
 * Hands the started server to `use` and stops it however `use` ends.
 * @template T
 * @param {Promise<Server>} starting
 * @param {(server: Server) => Promise<T>} use
 * @returns {Promise<T>}
 */
async function withServer(starting, use) {
  const server = await starting;
  try {
    return await use(server);
  } finally {
    const code = await server.stop();
    if (code !== 0) progress(`the ${server.name} exited with code ${code} when stopped\n${server.stderrTail()}`);
  }
}

function startMock() {
  return startServer({ name: 'mock provider', script: MOCK_SCRIPT, args: ['--port', '0'] });
}

/** @param {string} upstreamUrl */
function startPassThrough(upstreamUrl) {
  return startServer({ name: 'pass-through', script: PASS_THROUGH_SCRIPT, args: ['--upstream-url', upstreamUrl, '--port', '0'] });
}

/** The policy every scenario runs: the defaults (injection, anomaly, metering, traces) with all five DLP detectors redacting. */
const PROXY_CONFIG = { piiDetectors: PII_REDACTING };

/**
 * What a scenario's proxy is loaded in turn with: with `--against`, the same scenario's proxy as
 * another checkout built it; else the scenario it names (`versus`), if any.
 * @param {Scenario} scenario
 * @param {string | undefined} against
 * @returns {{ scenario: Scenario, cli: string, slug: string, versus: { scenario: string, build?: string } } | null}
 */
function opponentOf(scenario, against) {
  if (against !== undefined) return { scenario, cli: join(against, 'dist/cli/main.js'), slug: 'build', versus: { scenario: scenario.name, build: displayPath(against) } };
  const other = versusOf(scenario);
  return other === null ? null : { scenario: other, cli: PROXY_CLI, slug: other.name, versus: { scenario: other.name } };
}

/**
 * @param {string} cli  the `svc` command to start the proxy with (this checkout's, or the one --against names)
 * @param {string} upstreamUrl
 * @param {BenchOptions} options
 * @param {string} svcHome
 * @param {string | undefined} profile  where node --cpu-prof writes the profile, if wanted
 * @param {number | 'auto'} ioThreads  the proxy's --io-threads
 * @param {string} [valkeyUrl]  the Redis the proxy meters against, when the scenario wants one
 * @param {string} [wasmDir]  the folder of installed WASM rules, when the scenario wants some
 */
function startProxy(cli, upstreamUrl, options, svcHome, profile, ioThreads, valkeyUrl, wasmDir) {
  const threads = options.threads === undefined ? [] : ['--threads', String(options.threads)];
  const store = valkeyUrl === undefined ? [] : ['--valkey-url', valkeyUrl];
  const config = join(svcHome, 'bench-proxy.json');
  writeFileSync(config, JSON.stringify(PROXY_CONFIG));
  return startServer({
    name: 'proxy',
    script: cli,
    args: ['proxy', '--port', '0', '--upstream-url', upstreamUrl, '--config', config, '--io-threads', String(ioThreads), ...threads, ...store],
    nodeArgs: profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', dirname(profile), '--cpu-prof-name', basename(profile)],
    env: { SVC_HOME: svcHome, SVC_LOG_LEVEL: 'warn', ...(wasmDir === undefined ? {} : { SVC_WASM_DIR: wasmDir }) },
  });
}

/**
 * @param {import('./micro/index.js').MicroBenchmark} benchmark
 * @returns {Promise<import('./lib/report.js').MicroResult>}
 */
async function runMicro(benchmark) {
  const { name, description } = benchmark;
  progress(`micro ${name}: ${description}`);
  try {
    return { name, description, status: 'ok', figures: await benchmark.run() };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    progress(`micro ${name}: failed, ${reason}`);
    return { name, description, status: 'failed', reason };
  }
}

/**
 * A temporary directory removed when the process exits.
 * @param {string} prefix
 */
function temporaryDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The path to show for a profile the proxy was asked to write, or undefined when it was not
 * asked or wrote none (said on the way).
 * @param {string} label
 * @param {string | undefined} profile
 */
function written(label, profile) {
  if (profile === undefined) return undefined;
  if (existsSync(profile)) return displayPath(profile);
  progress(`${label}: the proxy wrote no CPU profile (it must exit cleanly on SIGTERM)`);
  return undefined;
}

/**
 * Relative to the repository when inside it.
 * @param {string} file
 */
function displayPath(file) {
  const inRepo = relative(ROOT, file);
  return inRepo === '' ? '.' : inRepo.startsWith('..') ? file : inRepo;
}

/** @param {string} message */
function progress(message) {
  process.stderr.write(`bench: ${message}\n`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(err instanceof UsageError ? `bench: ${err.message}\nSee npm run bench -- --help\n` : `bench: ${err?.stack ?? err}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
