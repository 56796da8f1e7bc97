// @ts-check
/** The results: the JSON file with the machine they were measured on, and the stdout table. */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { dirname } from 'node:path';
import { describeVersus, versusLabel } from './paired.js';

/** @typedef {import('./load-generator.js').LoadResult} LoadResult */

/**
 * One side's figures: the load generator's, plus which server it loaded (the mock provider on the
 * direct side; the proxy, or the pass-through of a pass-through scenario, on the proxy side) and
 * that process's CPU time and peak RSS.
 * @typedef {LoadResult & { server: string, cpuUsPerRequest: number | null, peakRssMiB: number }} SideFigures
 */

/**
 * @typedef {object} ScenarioResult
 * @property {string} name
 * @property {string} description
 * @property {'ok' | 'failed'} status
 * @property {string} [reason]  why it failed
 * @property {import('./scenarios.js').Shape} [shape]
 * @property {{ direct: SideFigures, proxy: SideFigures }} [sides]
 * @property {number | null} [ratio]  proxy requests/s ÷ direct requests/s
 * @property {string} [profile]  the proxy's .cpuprofile, with --prof
 * @property {import('./paired.js').Versus} [versus]  the other scenario's proxy, loaded in turn with this one's
 */

/**
 * @typedef {object} MicroResult
 * @property {string} name
 * @property {string} description
 * @property {'ok' | 'failed'} status
 * @property {Record<string, number | string>} [figures]
 * @property {string} [reason]
 */

/**
 * @typedef {object} Report
 * @property {ReturnType<typeof machine>} machine
 * @property {string | null} commit
 * @property {string} date
 * @property {import('./options.js').BenchOptions} options
 * @property {ScenarioResult[]} scenarios
 * @property {MicroResult[]} micro
 * @property {import('./baseline.js').BaselineComparison | null} [baseline]  this run against the committed baseline, in the written results
 */

export function machine() {
  return {
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? null,
    nodeVersion: process.version,
    platform: `${process.platform} ${release()} ${process.arch}`,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  };
}

/** The checked-out commit, or null outside a git work tree. */
export function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/**
 * @param {string} file
 * @param {Report} report
 */
export async function writeReport(file, report) {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
}

const COLUMNS = ['scenario', 'side', 'conns', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'ttfb p50', 'ttfb p99', 'errors', 'proxy/direct', 'CPU µs/req', 'peak RSS MiB'];

/**
 * The results as aligned text tables, followed by error samples and profile paths.
 * @param {Report} report
 */
export function formatReport(report) {
  const { scenarios, micro } = report;
  /** @type {string[]} */
  const sections = [];
  if (scenarios.length > 0) sections.push(table(COLUMNS, scenarios.flatMap(scenarioRows)));
  const notes = scenarios.flatMap(scenarioNotes);
  if (notes.length > 0) sections.push(notes.join('\n'));
  if (micro.length > 0) sections.push(table(['micro-benchmark', 'figures'], micro.map(microRow)));
  return `${sections.join('\n\n')}\n`;
}

/**
 * @param {ScenarioResult} result
 * @returns {string[][]}
 */
function scenarioRows(result) {
  if (result.sides === undefined) return [[result.name, `${result.status}: ${result.reason}`]];
  const { direct, proxy } = result.sides;
  const connections = String(result.shape?.connections);
  const rows = [
    [result.name, 'direct', connections, ...sideCells(direct), '', ...processCells(direct)],
    ['', 'proxy', connections, ...sideCells(proxy), ratioCell(proxy, direct), ...processCells(proxy)],
  ];
  const versus = result.versus?.proxy;
  if (versus !== undefined) rows.push(['', 'versus', connections, ...sideCells(versus), ratioCell(versus, direct), ...processCells(versus)]);
  return rows;
}

/**
 * @param {SideFigures} side
 * @param {SideFigures} direct
 */
function ratioCell(side, direct) {
  return direct.requestsPerSec > 0 ? `${(side.requestsPerSec / direct.requestsPerSec).toFixed(3)}×` : 'n/a';
}

/** @param {SideFigures} side */
function sideCells(side) {
  const errors = side.errors.non2xx + side.errors.failed + side.errors.truncated;
  return [
    Math.round(side.requestsPerSec).toString(),
    ms(side.latencyMs.p50),
    ms(side.latencyMs.p90),
    ms(side.latencyMs.p99),
    ms(side.ttfbMs.p50),
    ms(side.ttfbMs.p99),
    String(errors),
  ];
}

/** @param {SideFigures} side */
function processCells(side) {
  return [side.cpuUsPerRequest === null ? 'n/a' : Math.round(side.cpuUsPerRequest).toString(), side.peakRssMiB.toFixed(0)];
}

/** @param {number} value */
function ms(value) {
  return value.toFixed(2);
}

/**
 * Error samples of sides that had errors, and profile paths.
 * @param {ScenarioResult} result
 */
function scenarioNotes(result) {
  /** @type {string[]} */
  const notes = [];
  const sides = result.versus === undefined ? result.sides : { ...result.sides, versus: result.versus.proxy };
  for (const [side, figures] of Object.entries(sides ?? {})) {
    const { non2xx, failed, truncated } = figures.errors;
    if (non2xx + failed + truncated === 0) continue;
    notes.push(`${result.name} ${side}: ${non2xx} non-2xx, ${failed} failed, ${truncated} truncated`);
    for (const sample of figures.errorSamples) notes.push(`  ${sample}`);
  }
  if (result.versus !== undefined) notes.push(`${result.name}: ${describeVersus(result.versus)} (row "versus": ${versusLabel(result.versus)})`);
  if (result.profile !== undefined) notes.push(`${result.name}: proxy CPU profile ${result.profile}`);
  if (result.versus?.profile !== undefined) notes.push(`${result.name}: ${versusLabel(result.versus)}: CPU profile ${result.versus.profile}`);
  return notes;
}

/**
 * @param {MicroResult} result
 * @returns {string[]}
 */
function microRow(result) {
  const figures = Object.entries(result.figures ?? {}).map(([name, value]) => `${value} ${name}`);
  return [result.name, result.status === 'ok' ? figures.join(', ') : `failed: ${result.reason}`];
}

/**
 * Text columns: the first two left-aligned, the rest right-aligned. A row with fewer cells
 * than columns (a failed scenario) lets its last cell run on.
 * @param {string[]} header
 * @param {string[][]} rows
 */
function table(header, rows) {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.filter((row) => row.length === header.length).map((row) => (row[i] ?? '').length)));
  /** @param {string[]} row */
  const line = (row) =>
    row
      .map((cell, i) => (row.length < header.length && i === row.length - 1 ? cell : i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}
