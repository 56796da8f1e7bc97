// @ts-check
/**
 * Injection detection on the labelled corpus in bench/corpora/injection/: recall per vector
 * class, false alarms per benign class, precision and recall overall, at the confidence where
 * `block` acts; and the classifier's MB/s on realistic tool-result text.
 *
 *   node bench/detection/injection.js              # the tuning split
 *   node bench/detection/injection.js --held-out   # the held-out split too
 *
 * Tuning reads only tuning.jsonl: the held-out split is read when --held-out (or `heldOut`) asks
 * for it, to report, never to tune against. `npm run bench -- injection` reports both.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../lib/random.js';
import { medianSeconds } from '../micro/timing.js';

const CORPUS = new URL('../corpora/injection/', import.meta.url);
const SPEED_BYTES = 2 * 1024 * 1024;

/**
 * @typedef {{ id: string, label: 'injection' | 'benign', class: string, lang: string, text: string }} Case
 */

/**
 * The cases of one split.
 * @param {'tuning' | 'held-out'} split
 * @param {{ heldOut?: boolean }} [options]
 * @returns {Case[]}
 */
export function readSplit(split, options = {}) {
  if (split === 'held-out' && options.heldOut !== true) throw new Error('the held-out split is read only with --held-out: it reports, it does not tune');
  return readFileSync(new URL(`${split}.jsonl`, CORPUS), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/**
 * @param {Case[]} cases
 * @param {(text: string) => number} confidenceOf
 * @param {number} threshold
 */
export function score(cases, confidenceOf, threshold) {
  /** @type {Record<string, { total: number, flagged: number }>} */
  const byClass = {};
  let tp = 0;
  let fp = 0;
  let fn = 0;
  /** @type {string[]} */
  const misses = [];
  for (const c of cases) {
    const flagged = confidenceOf(c.text) >= threshold;
    const entry = (byClass[`${c.label}/${c.class}`] ??= { total: 0, flagged: 0 });
    entry.total++;
    if (flagged) entry.flagged++;
    if (c.label === 'injection') flagged ? tp++ : (fn++, misses.push(c.id));
    else if (flagged) (fp++, misses.push(c.id));
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  return { precision, recall, tp, fp, fn, byClass, misses };
}

/**
 * Tool output of the ordinary kind: code, logs, JSON, prose, with a share of its blocks taken from
 * the corpus's suspicious benign texts (each full of the words injections use).
 */
function realisticText(/** @type {Case[]} */ benign, /** @type {number} */ bytes, /** @type {number} */ seed, /** @type {number} */ suspiciousShare) {
  const random = seededRandom(seed);
  const int = (/** @type {number} */ n) => Math.floor(random() * n);
  const hex = (/** @type {number} */ n) => Array.from({ length: n }, () => '0123456789abcdef'[int(16)]).join('');
  const WORDS = ['request', 'cache', 'retry', 'handler', 'module', 'build', 'config', 'session', 'worker', 'stream', 'buffer', 'query', 'index', 'schema', 'deploy', 'metric'];
  const w = () => WORDS[int(WORDS.length)];
  const blocks = [
    () => `${Array.from({ length: 12 }, w).join(' ')}. The ${w()} ${w()} returns early when the ${w()} is empty.\n\n`,
    () => `export function ${w()}${int(99)}(input: string, limit = ${int(100)}): number {\n  const parts = input.split(',');\n  return parts.slice(0, limit).reduce((n, p) => n + p.length, 0);\n}\n`,
    () => `2025-03-${10 + int(18)}T12:${10 + int(49)}:${10 + int(49)}.${int(999)}Z INFO [${w()}] req=${hex(16)} GET /api/v1/${w()}s/${int(99999)} status=200 latency_ms=${int(900)}\n`,
    () => `${JSON.stringify({ id: hex(24), status: 'ok', items: [{ name: w(), size: int(9999), sha: hex(40) }], updated: '2025-01-02T03:04:05Z' })}\n`,
    () => `src/${w()}/${w()}.ts:${int(400)}:${int(80)}: const ${w()} = await load${w()}(${w()}Id);\n`,
    () => `diff --git a/src/${w()}.ts b/src/${w()}.ts\n@@ -${int(300)},7 +${int(300)},7 @@\n-  const limit = ${int(100)};\n+  const limit = ${int(1000)};\n`,
    () => `${benign[int(benign.length)]?.text ?? ''}\n`,
  ];
  // Joined once, as a tool result arrives (one flat string from JSON.parse): a string grown by
  // `+=` is a rope, and flattening it on first use would be charged to the classifier.
  const parts = [];
  let length = 0;
  while (length < bytes) {
    const block = blocks[random() < suspiciousShare ? 6 : int(6)]();
    parts.push(block);
    length += block.length;
  }
  return parts.join('');
}

/** @param {{ heldOut: boolean }} options */
export async function injectionReport(options) {
  const { InjectionClassifier } = await import('../../dist/policy/injection/index.js');
  const { DEFAULT_INJECTION_THRESHOLD } = await import('../../dist/policy/policy-config.js');
  const classifier = new InjectionClassifier();
  const confidenceOf = (/** @type {string} */ text) => classifier.scan(text, 'tool_result')?.confidence ?? 0;
  const tuning = readSplit('tuning');
  const splits = { tuning: score(tuning, confidenceOf, DEFAULT_INJECTION_THRESHOLD) };
  if (options.heldOut) splits['held-out'] = score(readSplit('held-out', { heldOut: true }), confidenceOf, DEFAULT_INJECTION_THRESHOLD);

  const benign = tuning.filter((c) => c.label === 'benign');
  /**
   * MB/s over seven texts with this share of suspicious blocks, each round scanning all of them
   * (texts differ in how much they hold to read, so one text per timing would measure the text),
   * after a warm-up round as a long-lived worker has had; the median of five rounds.
   */
  const speed = (/** @type {number} */ share) => {
    const texts = [1, 2, 3, 4, 5, 6, 7].map((seed) => realisticText(benign, SPEED_BYTES, seed, share));
    const bytes = texts.reduce((n, text) => n + Buffer.byteLength(text), 0);
    const seconds = medianSeconds(() => {
      for (const text of texts) classifier.scan(text, 'tool_result');
    }, 5);
    return Math.round((bytes / 1e6 / seconds) * 10) / 10;
  };
  return { threshold: DEFAULT_INJECTION_THRESHOLD, splits, mbPerSecond: speed(0.01), mbPerSecondSuspicious: speed(0.1) };
}

/** @param {Awaited<ReturnType<typeof injectionReport>>} report */
export function formatReport(report) {
  const lines = [
    `injection at confidence ≥ ${report.threshold}; scoring ${report.mbPerSecond} MB/s on tool output with 1% suspicious blocks, ${report.mbPerSecondSuspicious} MB/s with 10%`,
  ];
  for (const [split, s] of Object.entries(report.splits)) {
    lines.push(`\n${split}: precision ${s.precision.toFixed(3)}, recall ${s.recall.toFixed(3)} (tp ${s.tp}, fp ${s.fp}, fn ${s.fn})`);
    for (const [cls, e] of Object.entries(s.byClass).sort()) {
      const [label] = cls.split('/');
      lines.push(`  ${cls.padEnd(36)} ${label === 'injection' ? 'recall' : 'false alarms'} ${e.flagged}/${e.total}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** @type {import('../micro/index.js').MicroBenchmark} */
export const injectionBenchmark = {
  name: 'injection',
  description: 'the injection classifier: precision and recall per vector class on the labelled corpus, tuning and held-out splits; MB/s on realistic tool results',
  async run() {
    const report = await injectionReport({ heldOut: true });
    /** @type {Record<string, number | string>} */
    const figures = { 'MB/s': report.mbPerSecond, 'MB/s 10% suspicious': report.mbPerSecondSuspicious };
    for (const [split, s] of Object.entries(report.splits)) {
      figures[`${split} precision`] = Number(s.precision.toFixed(3));
      figures[`${split} recall`] = Number(s.recall.toFixed(3));
      for (const [cls, e] of Object.entries(s.byClass)) if (cls.startsWith('injection/')) figures[`${split} recall ${cls.slice(10)}`] = Number((e.flagged / e.total).toFixed(2));
    }
    return figures;
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = await injectionReport({ heldOut: process.argv.includes('--held-out') });
  process.stdout.write(formatReport(report));
  if (process.argv.includes('--misses')) for (const [split, s] of Object.entries(report.splits)) process.stdout.write(`${split} misses: ${s.misses.join(' ')}\n`);
}
