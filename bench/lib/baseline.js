// @ts-check
/**
 * The regression check: each scenario's proxy CPU per request against the committed baseline
 * (bench/results/baseline.json). CPU time per request, unlike requests per second, barely moves
 * with what else the machine is doing, so a rise past the threshold is worth a look.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const DEFAULT_BASELINE = fileURLToPath(new URL('../results/baseline.json', import.meta.url));

/** A rise of CPU µs per request past this fraction of the baseline's is flagged. */
export const REGRESSION_THRESHOLD = 0.2;

/** @typedef {import('./report.js').Report} Report */

/**
 * @typedef {object} BaselineRow
 * @property {string} scenario
 * @property {number} baselineUs  the baseline's proxy CPU µs per request
 * @property {number} nowUs  this run's
 * @property {number} change  nowUs ÷ baselineUs − 1
 * @property {boolean} regressed  change > REGRESSION_THRESHOLD
 */

/**
 * @typedef {object} BaselineComparison
 * @property {string | null} commit  the baseline's commit
 * @property {string} date  the baseline's date
 * @property {boolean} sameMachine  same core count and CPU model as this run
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
  /** @type {Map<string, number>} */
  const before = new Map();
  for (const s of baseline.scenarios) {
    const us = s.status === 'ok' ? s.sides?.proxy.cpuUsPerRequest : null;
    if (typeof us === 'number' && us > 0) before.set(s.name, us);
  }
  /** @type {BaselineRow[]} */
  const rows = [];
  for (const s of report.scenarios) {
    const nowUs = s.status === 'ok' ? s.sides?.proxy.cpuUsPerRequest : null;
    const baselineUs = before.get(s.name);
    if (typeof nowUs !== 'number' || baselineUs === undefined) continue;
    const change = nowUs / baselineUs - 1;
    rows.push({ scenario: s.name, baselineUs, nowUs, change, regressed: change > REGRESSION_THRESHOLD });
  }
  return {
    commit: baseline.commit,
    date: baseline.date,
    sameMachine: baseline.machine.cores === report.machine.cores && baseline.machine.cpuModel === report.machine.cpuModel,
    rows,
  };
}

/**
 * The comparison as text lines for the report.
 * @param {BaselineComparison} comparison
 */
export function formatComparison(comparison) {
  const head = `proxy CPU µs/req against the baseline (${comparison.commit ?? 'no commit'}, ${comparison.date})${comparison.sameMachine ? '' : ' — measured on another machine, compare with care'}:`;
  if (comparison.rows.length === 0) return `${head}\n  no scenario in common`;
  const width = Math.max(...comparison.rows.map((r) => r.scenario.length));
  const lines = comparison.rows.map((r) => {
    const pct = `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(0)}%`;
    const flag = r.regressed ? `  REGRESSION (more than +${REGRESSION_THRESHOLD * 100}%)` : '';
    return `  ${r.scenario.padEnd(width)}  ${Math.round(r.baselineUs).toString().padStart(6)} → ${Math.round(r.nowUs).toString().padStart(6)}  ${pct.padStart(5)}${flag}`;
  });
  return [head, ...lines].join('\n');
}
