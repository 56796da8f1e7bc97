// @ts-check
/**
 * Accuracy of the DLP detectors: precision and recall of each on the labelled corpus in
 * test/fixtures/dlp/corpus.jsonl (see test/fixtures/dlp/generate.mjs).
 */
import { readFileSync } from 'node:fs';

const CORPUS = new URL('../../test/fixtures/dlp/corpus.jsonl', import.meta.url);

/** @type {import('./index.js').MicroBenchmark} */
export const dlpAccuracyBenchmark = {
  name: 'dlp-accuracy',
  description: 'evaluateCorpus from dist/policy/dlp/evaluate.js on the labelled DLP corpus: precision and recall per detector',
  async run() {
    const { DlpScanner } = await import('../../dist/policy/dlp/index.js');
    const { evaluateCorpus, labelledSnippetSchema } = await import('../../dist/policy/dlp/evaluate.js');
    const lines = readFileSync(CORPUS, 'utf8').split('\n').filter((line) => line !== '');
    const snippets = lines.map((line) => labelledSnippetSchema.parse(JSON.parse(line)));
    /** @type {Record<string, number>} */
    const figures = { snippets: snippets.length };
    for (const [detector, score] of Object.entries(evaluateCorpus(snippets, new DlpScanner()))) {
      const name = detector.replace('pii.', '');
      figures[`${name} precision`] = round(score.precision);
      figures[`${name} recall`] = round(score.recall);
    }
    return figures;
  },
};

/** @param {number} value */
function round(value) {
  return Math.round(value * 10_000) / 10_000;
}
