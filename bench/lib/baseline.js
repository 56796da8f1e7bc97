// @ts-check
/**
 * Before and after: each scenario's proxy figures against the committed baseline
 * (bench/results/baseline.json), and the regression check on its CPU per request. CPU time per
 * request, unlike requests per second, barely moves with what else the machine is doing, so a
 * rise past the threshold is worth a look; the throughput ratio and peak RSS are shown beside it.
 * What the mock provider costs a request (the direct side: the same code in every run) tells
 * whether the machine itself has changed speed since the baseline; when it has, by more than the
 * threshold, no scenario is flagged, since the machine's change would be read as the proxy's.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { median } from './numbers.js';

export const DEFAULT_BASELINE = fileURLToPath(new URL('../results/baseline.json', import.meta.url));

/** A rise of CPU µs per request past this fraction of the baseline's is flagged. */
export const REGRESSION_THRESHOLD = 0.2;

/**
 * The machine counts as the baseline's when the mock's CPU per request (the median of the
 * scenarios' ratios) is within this fraction of the baseline's: the same margin as the flag's.
 */
export const MACHINE_TOLERANCE = REGRESSION_THRESHOLD;

/** @typedef {import('./report.js').Report} Report */

/**
 * @typedef {object} BaselineRow
 * @property {string} scenario
 * @property {number} baselineUs  the baseline's proxy CPU µs per request
 * @property {number} nowUs  this run's
 * @property {number} change  nowUs ÷ baselineUs − 1
 * @property {boolean} regressed  change > REGRESSION_THRESHOLD, on a machine judged comparable
 * @property {number | null} baselineRatio  the baseline's proxy/direct requests per second
 * @property {number | null} nowRatio
 * @property {number | null} baselineRssMiB  the baseline proxy's peak RSS
 * @property {number | null} nowRssMiB
 * @property {boolean} sameShape  both ran the same connections, prompt size and chunks (else the figures are not comparable and no regression is flagged)
 */

/**
 * @typedef {object} BaselineComparison
 * @property {string | null} commit  the baseline's commit
 * @property {string} date  the baseline's date
 * @property {boolean} sameMachine  same core count and CPU model as this run
 * @property {number | null} machineSpeed  the mock's CPU µs per request in this run ÷ in the baseline, the median over the scenarios both measured; null when none has the figure on both sides
 * @property {boolean} judged  whether a rise is flagged: the mock ran within MACHINE_TOLERANCE of its baseline cost (or that is unknown)
 * @property {BaselineRow[]} rows  scenarios both runs measured
 */

/**
 * The baseline report at `file`, or null when there is none.
 * @param {string} file
 * @returns {Promise<Report | null>}
 */
export async function readBaseline(file) {
  let text;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code === 'ENOENT') return null;
    throw err;
  }
  return /** @type {Report} */ (JSON.parse(text));
}

/**
 * @param {Report} report
 * @param {Report} baseline
 * @returns {BaselineComparison}
 */
export function compareToBaseline(report, baseline) {
  /** @type {Map<string, import('./report.js').ScenarioResult>} */
  const before = new Map();
  for (const s of baseline.scenarios) {
    const us = s.status === 'ok' ? s.sides?.proxy.cpuUsPerRequest : null;
    if (typeof us === 'number' && us > 0) before.set(s.name, s);
  }
  /** @type {BaselineRow[]} */
  const rows = [];
  /** @type {number[]} */
  const mockRatios = [];
  for (const s of report.scenarios) {
    const nowUs = s.status === 'ok' ? s.sides?.proxy.cpuUsPerRequest : null;
    const old = before.get(s.name);
    if (typeof nowUs !== 'number' || old === undefined) continue;
    const baselineUs = /** @type {number} */ (old.sides?.proxy.cpuUsPerRequest);
    const change = nowUs / baselineUs - 1;
    // A baseline that does not record its shape is taken at its word.
    const sameShape = old.shape === undefined || JSON.stringify(old.shape) === JSON.stringify(s.shape ?? null);
    const mockNow = s.sides?.direct?.cpuUsPerRequest;
    const mockBefore = old.sides?.direct?.cpuUsPerRequest;
    if (sameShape && typeof mockNow === 'number' && typeof mockBefore === 'number' && mockNow > 0 && mockBefore > 0) mockRatios.push(mockNow / mockBefore);
    rows.push({
      scenario: s.name,
      baselineUs,
      nowUs,
      change,
      regressed: false,
      sameShape,
      baselineRatio: old.ratio ?? null,
      nowRatio: s.ratio ?? null,
      baselineRssMiB: old.sides?.proxy.peakRssMiB ?? null,
      nowRssMiB: s.sides?.proxy.peakRssMiB ?? null,
    });
  }
  const machineSpeed = mockRatios.length === 0 ? null : median(mockRatios.sort((a, b) => a - b));
  const judged = machineSpeed === null || Math.abs(machineSpeed - 1) <= MACHINE_TOLERANCE;
  return {
    commit: baseline.commit,
    date: baseline.date,
    sameMachine: baseline.machine.cores === report.machine.cores && baseline.machine.cpuModel === report.machine.cpuModel,
    machineSpeed,
    judged,
    // Known only once every scenario's mock is read: whether the machine is the baseline's.
    rows: rows.map((row) => ({ ...row, regressed: judged && row.sameShape && row.change > REGRESSION_THRESHOLD })),
  };
}


/**
 * The comparison as text lines for the report.
 * @param {BaselineComparison} comparison
 */
export function formatComparison(comparison) {
  const head = `proxy before (the baseline, ${comparison.commit ?? 'no commit'}, ${comparison.date}) and after (this run)${machineNote(comparison)}:`;
  if (comparison.rows.length === 0) return `${head}\n  no scenario in common`;
  const width = Math.max('scenario'.length, ...comparison.rows.map((r) => r.scenario.length));
  const ratio = (/** @type {number | null} */ r) => (r === null ? 'n/a' : `${r.toFixed(3)}×`);
  const rss = (/** @type {number | null} */ m) => (m === null ? 'n/a' : m.toFixed(0));
  const columns = `  ${'scenario'.padEnd(width)}  ${'proxy/direct'.padStart(17)}  ${'CPU µs/req'.padStart(15)}  change  ${'peak RSS MiB'.padStart(12)}`;
  const lines = comparison.rows.map((r) => {
    const pct = `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(0)}%`;
    const flag = flagOf(r, comparison.judged);
    const ratios = `${ratio(r.baselineRatio)} → ${ratio(r.nowRatio)}`;
    const cpu = `${Math.round(r.baselineUs).toString().padStart(6)} → ${Math.round(r.nowUs).toString().padStart(6)}`;
    const mem = `${rss(r.baselineRssMiB)} → ${rss(r.nowRssMiB)}`;
    return `  ${r.scenario.padEnd(width)}  ${ratios.padStart(17)}  ${cpu}  ${pct.padStart(6)}  ${mem.padStart(12)}${flag}`;
  });
  return [head, columns, ...lines].join('\n');
}

/**
 * What the head line says of the machine: nothing when it is the baseline's.
 * @param {BaselineComparison} comparison
 */
function machineNote(comparison) {
  if (!comparison.judged) {
    return ` — the mock took ${comparison.machineSpeed?.toFixed(2)}× its baseline CPU per request (median of the scenarios), so the machine is not the baseline's and no rise is flagged; compare two builds in one run with --against`;
  }
  return comparison.sameMachine ? '' : ' — measured on another machine, compare with care';
}

/**
 * The note after a row: flagged, not compared, or over the threshold on another machine.
 * @param {BaselineRow} row
 * @param {boolean} judged
 */
function flagOf(row, judged) {
  if (row.regressed) return `  REGRESSION (more than +${REGRESSION_THRESHOLD * 100}% CPU)`;
  if (!row.sameShape) return '  (the baseline ran another shape: not compared)';
  if (!judged && row.change > REGRESSION_THRESHOLD) return `  (over +${REGRESSION_THRESHOLD * 100}%, on a machine not the baseline's: not flagged)`;
  return '';
}
