// @ts-check
/** The benchmark's command line: what to run and how. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MICRO_BENCHMARKS } from '../micro/index.js';
import { DEFAULT_BASELINE } from './baseline.js';
import { SCENARIOS } from './scenarios.js';

export const DEFAULT_OUT = fileURLToPath(new URL('../results/latest.json', import.meta.url));

/** @typedef {import('./scenarios.js').Scenario} Scenario */
/** @typedef {import('../micro/index.js').MicroBenchmark} MicroBenchmark */

/**
 * @typedef {object} BenchOptions
 * @property {string[]} names  as given; empty means everything
 * @property {number} durationS  measured seconds per side
 * @property {number} warmupS  uncounted seconds per side before the measured window
 * @property {number} rounds  rounds of a scenario whose proxy is loaded in turn with another's
 * @property {string | undefined} against  another checkout, built: each scenario's proxy is loaded in turn with its build of the same proxy
 * @property {import('./scenarios.js').ShapeOverrides} overrides
 * @property {number | undefined} threads  passed to the proxy
 * @property {boolean} prof
 * @property {string} out
 * @property {string} baseline  the report each scenario's CPU per request is compared with
 * @property {boolean} saveBaseline
 * @property {boolean} failOnRegression
 * @property {boolean} jsonOnly
 * @property {boolean} help
 */

export class UsageError extends Error {}

export function usage() {
  const scenarios = SCENARIOS.map((s) => `  ${s.name.padEnd(18)} ${s.description}`).join('\n');
  const micro = MICRO_BENCHMARKS.map((m) => `  ${m.name.padEnd(18)} ${m.description}`).join('\n');
  return `Usage: npm run bench -- [name ...] [options]

Runs each scenario straight against the mock provider and through the proxy, in the same run.
With no name, runs every scenario and every micro-benchmark.

Scenarios:
${scenarios}

Micro-benchmarks ("micro" selects them all):
${micro}

Options:
  --duration S          measured seconds per side (default 5)
  --warmup S            uncounted warm-up seconds per side (default 1)
  --rounds N            rounds of a scenario compared with another ("in turn"): both proxies are
                        loaded one after the other N times, each window --duration ÷ N (default 3)
  --against DIR         load each scenario's proxy in turn with the same scenario's proxy as another
                        checkout built it (DIR holds dist/ from npm run build): two builds compared
                        in one run; pass-through scenarios are left out, micro-benchmarks measure
                        this checkout only
  --connections N       connections for every selected scenario (default: the scenario's own)
  --prompt-size BYTES   prompt size for every selected scenario (default: the scenario's own)
  --chunks N            content chunks per streamed answer (default 20, the scenarios' own)
  --threads N           passed to the proxy as --threads (default: the proxy's own)
  --prof                run the proxy under node --cpu-prof; a .cpuprofile per scenario goes to bench/results/
                        (a scenario in turn: one for each of the two proxies)
  --out FILE            where the JSON results go (default bench/results/latest.json)
  --json-only           print the JSON results instead of the table
  --baseline FILE       the report to compare CPU per request with (default bench/results/baseline.json);
                        a scenario more than 20% above it is flagged REGRESSION
  --save-baseline       also write this run's results as the baseline
  --fail-on-regression  exit with 3 when a scenario is flagged
  --help                show this help
`;
}

/**
 * @param {string[]} args
 * @returns {BenchOptions}
 */
export function parseOptions(args) {
  const { values, positionals } = parseFlags(args);
  return {
    names: positionals,
    durationS: positiveNumber('--duration', values.duration) ?? 5,
    warmupS: positiveNumber('--warmup', values.warmup, { allowZero: true }) ?? 1,
    rounds: positiveInteger('--rounds', values.rounds) ?? 3,
    against: builtCheckout(values.against),
    overrides: {
      connections: positiveInteger('--connections', values.connections),
      promptBytes: positiveInteger('--prompt-size', values['prompt-size']),
      chunks: positiveInteger('--chunks', values.chunks),
    },
    threads: positiveInteger('--threads', values.threads),
    prof: values.prof === true,
    out: values.out ?? DEFAULT_OUT,
    baseline: values.baseline ?? DEFAULT_BASELINE,
    saveBaseline: values['save-baseline'] === true,
    failOnRegression: values['fail-on-regression'] === true,
    jsonOnly: values['json-only'] === true,
    help: values.help === true,
  };
}

/** @param {string[]} args */
function parseFlags(args) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        duration: { type: 'string' },
        warmup: { type: 'string' },
        rounds: { type: 'string' },
        against: { type: 'string' },
        connections: { type: 'string' },
        'prompt-size': { type: 'string' },
        chunks: { type: 'string' },
        threads: { type: 'string' },
        prof: { type: 'boolean' },
        out: { type: 'string' },
        baseline: { type: 'string' },
        'save-baseline': { type: 'boolean' },
        'fail-on-regression': { type: 'boolean' },
        'json-only': { type: 'boolean' },
        help: { type: 'boolean' },
      },
    });
  } catch (err) {
    throw new UsageError(/** @type {Error} */ (err).message);
  }
}

/**
 * @param {string} flag
 * @param {string | undefined} value
 * @param {{ allowZero?: boolean }} [opts]
 */
function positiveNumber(flag, value, opts = {}) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !opts.allowZero)) throw new UsageError(`${flag} takes a positive number, not ${JSON.stringify(value)}`);
  return n;
}

/**
 * @param {string} flag
 * @param {string | undefined} value
 */
function positiveInteger(flag, value) {
  const n = positiveNumber(flag, value);
  if (n !== undefined && !Number.isInteger(n)) throw new UsageError(`${flag} takes a whole number, not ${JSON.stringify(value)}`);
  return n;
}

/**
 * The scenarios and micro-benchmarks the names select, in their registry order. With `against`,
 * only scenarios whose proxy is svc's: a pass-through scenario is left out, or refused if named.
 * @param {string[]} names
 * @param {string} [against]
 * @returns {{ scenarios: Scenario[], micro: MicroBenchmark[] }}
 */
export function selectWork(names, against = undefined) {
  const ours = against === undefined ? SCENARIOS : SCENARIOS.filter((s) => s.through === undefined);
  if (names.length === 0) return { scenarios: ours, micro: MICRO_BENCHMARKS };
  const known = new Set(['micro', ...SCENARIOS.map((s) => s.name), ...MICRO_BENCHMARKS.map((m) => m.name)]);
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) throw new UsageError(`unknown name ${unknown.join(', ')}; choose from ${[...known].join(', ')}`);
  const wanted = new Set(names);
  const foreign = SCENARIOS.filter((s) => wanted.has(s.name) && !ours.includes(s));
  if (foreign.length > 0) throw new UsageError(`--against compares two builds of the proxy; ${foreign.map((s) => s.name).join(', ')} measure${foreign.length === 1 ? 's' : ''} a pass-through instead`);
  return {
    scenarios: ours.filter((s) => wanted.has(s.name)),
    micro: MICRO_BENCHMARKS.filter((m) => wanted.has('micro') || wanted.has(m.name)),
  };
}

/**
 * The checkout --against names, as an absolute path; it must hold a built proxy.
 * @param {string | undefined} value
 */
function builtCheckout(value) {
  if (value === undefined) return undefined;
  const dir = resolve(value);
  if (!existsSync(join(dir, 'dist/cli/main.js'))) throw new UsageError(`--against ${value}: no dist/cli/main.js there; build that checkout with npm run build`);
  return dir;
}
