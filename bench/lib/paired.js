// @ts-check
/**
 * Two servers measured in turn. A scenario that names another (`versus`) loads its own proxy and
 * the other scenario's in alternating windows, so both see the same machine: on a shared VM the
 * speed drifts by tens of percent within minutes, and two figures taken a minute apart compare
 * that drift as much as the code. Each round measures both, the order swapped every round
 * (A B, B A, A B …); the comparison is the median of the rounds' own ratios, with their range.
 */

import { median, round } from './numbers.js';

/** @typedef {import('./report.js').SideFigures} SideFigures */

/**
 * @typedef {object} RatioSpread  this scenario's figure ÷ the other's, per round
 * @property {number} median
 * @property {number} min
 * @property {number} max
 */

/**
 * @typedef {object} Versus
 * @property {string} scenario  the scenario whose proxy this one's is compared with
 * @property {number} rounds
 * @property {SideFigures} proxy  that scenario's proxy, over the same rounds
 * @property {RatioSpread} requestsPerSec
 * @property {RatioSpread | null} cpuUsPerRequest  null when a round completed no request
 * @property {string} [build]  with --against: the checkout whose build of the same scenario's proxy it is
 * @property {string} [profile]  that proxy's .cpuprofile, with --prof
 */

/**
 * Runs `rounds` rounds of one window on each side, `ours` first in odd rounds and `theirs` first in even ones.
 * @template T
 * @param {number} rounds
 * @param {(window: number) => Promise<T>} ours  measures one window of this scenario's proxy
 * @param {(window: number) => Promise<T>} theirs  …and of the other scenario's
 * @returns {Promise<{ ours: T[], theirs: T[] }>}
 */
export async function inTurn(rounds, ours, theirs) {
  /** @type {{ ours: T[], theirs: T[] }} */
  const windows = { ours: [], theirs: [] };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      windows.ours.push(await ours(round));
      windows.theirs.push(await theirs(round));
    } else {
      windows.theirs.push(await theirs(round));
      windows.ours.push(await ours(round));
    }
  }
  return windows;
}

/**
 * One side's figures over several windows of the same server: counts added up, rates over the
 * whole time, CPU over all requests, each percentile the median of the windows' (histograms are
 * not kept), peak RSS the highest.
 * @param {SideFigures[]} windows
 * @returns {SideFigures}
 */
export function mergeWindows(windows) {
  const first = windows[0];
  if (first === undefined) throw new Error('no window to merge');
  if (windows.length === 1) return first;
  const requests = sum(windows.map((w) => w.requests));
  const seconds = sum(windows.map((w) => w.seconds));
  const cpuUs = sum(windows.map((w) => (w.cpuUsPerRequest ?? 0) * w.requests));
  const samples = [...new Set(windows.flatMap((w) => w.errorSamples))].slice(0, 5);
  return {
    server: first.server,
    requests,
    seconds,
    requestsPerSec: round(requests / seconds, 1),
    latencyMs: medianPercentiles(windows.map((w) => w.latencyMs)),
    ttfbMs: medianPercentiles(windows.map((w) => w.ttfbMs)),
    errors: {
      non2xx: sum(windows.map((w) => w.errors.non2xx)),
      failed: sum(windows.map((w) => w.errors.failed)),
      truncated: sum(windows.map((w) => w.errors.truncated)),
    },
    errorSamples: samples,
    cpuUsPerRequest: requests > 0 ? round(cpuUs / requests, 1) : null,
    peakRssMiB: Math.max(...windows.map((w) => w.peakRssMiB)),
  };
}

/**
 * The comparison of two servers measured in turn.
 * @param {{ scenario: string, build?: string }} other  the other scenario, and the checkout that built its proxy when not this one
 * @param {SideFigures[]} ours
 * @param {SideFigures[]} theirs  the same number of windows, round by round
 * @returns {Versus}
 */
export function compareInTurn(other, ours, theirs) {
  const rates = ours.map((w, i) => ratio(w.requestsPerSec, theirs[i]?.requestsPerSec ?? null));
  const cpu = ours.map((w, i) => ratio(w.cpuUsPerRequest, theirs[i]?.cpuUsPerRequest ?? null));
  return {
    scenario: other.scenario,
    ...(other.build === undefined ? {} : { build: other.build }),
    rounds: ours.length,
    proxy: mergeWindows(theirs),
    requestsPerSec: spread(rates) ?? { median: 0, min: 0, max: 0 },
    cpuUsPerRequest: spread(cpu),
  };
}

/**
 * What the other side is: `tool-call's proxy`, or `the proxy built in ../old`.
 * @param {Pick<Versus, 'scenario' | 'build'>} versus
 */
export function versusLabel(versus) {
  return versus.build === undefined ? `${versus.scenario}'s proxy` : `the proxy built in ${versus.build}`;
}

/**
 * @param {number | null} a
 * @param {number | null} b
 */
function ratio(a, b) {
  return a === null || b === null || b === 0 ? null : a / b;
}

/**
 * @param {Array<number | null>} values
 * @returns {RatioSpread | null}
 */
function spread(values) {
  if (values.some((v) => v === null) || values.length === 0) return null;
  const sorted = /** @type {number[]} */ (values).slice().sort((a, b) => a - b);
  return { median: round(median(sorted), 4), min: round(/** @type {number} */ (sorted[0]), 4), max: round(/** @type {number} */ (sorted.at(-1)), 4) };
}

/** @param {import('./load-generator.js').Percentiles[]} all */
function medianPercentiles(all) {
  /** @param {'p50' | 'p90' | 'p99'} key */
  const of = (key) => round(median(all.map((p) => p[key]).sort((a, b) => a - b)), 3);
  return { p50: of('p50'), p90: of('p90'), p99: of('p99') };
}

/** @param {number[]} values */
function sum(values) {
  return values.reduce((a, b) => a + b, 0);
}

/**
 * One line: `its proxy and tool-call's in turn, 3 rounds: req/s 0.781× (0.742–0.810), CPU µs/req 1.213× (1.180–1.250)`.
 * @param {Versus} versus
 */
export function describeVersus(versus) {
  /** @param {RatioSpread | null} r */
  const figure = (r) => (r === null ? 'n/a' : `${r.median.toFixed(3)}× (${r.min.toFixed(3)}–${r.max.toFixed(3)})`);
  const other = versus.build === undefined ? `${versus.scenario}'s` : `the one built in ${versus.build}`;
  return `its proxy and ${other} in turn, ${versus.rounds} round${versus.rounds === 1 ? '' : 's'}: req/s ${figure(versus.requestsPerSec)}, CPU µs/req ${figure(versus.cpuUsPerRequest)}`;
}
