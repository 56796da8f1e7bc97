// @ts-check
/**
 * Accuracy of the anomaly detectors on the recorded histories in test/fixtures/anomaly/histories/
 * (see test/fixtures/anomaly/generate.mjs): each history replayed request by request as its agent
 * sent it; precision and recall per detector, and how many loops were caught by their third pass.
 */
import { readdirSync, readFileSync } from 'node:fs';

const DIR = new URL('../../test/fixtures/anomaly/histories/', import.meta.url);

/** @type {import('./index.js').MicroBenchmark} */
export const anomalyAccuracyBenchmark = {
  name: 'anomaly-accuracy',
  description: 'scoreFixtures from dist/policy/anomaly/evaluate.js on the recorded tool-call histories: precision, recall and caught-in-time per detector',
  async run() {
    const { anomalyFixtureSchema, scoreFixtures } = await import('../../dist/policy/anomaly/evaluate.js');
    const { buildPolicyConfig } = await import('../../dist/policy/policy-config.js');
    const fixtures = readdirSync(DIR)
      .filter((name) => name.endsWith('.json'))
      .map((name) => anomalyFixtureSchema.parse(JSON.parse(readFileSync(new URL(name, DIR), 'utf8'))));
    const policy = buildPolicyConfig({ version: 'bench', settings: {}, localPii: undefined, env: {} });
    /** @type {Record<string, number | string>} */
    const figures = { histories: fixtures.length, healthy: fixtures.filter((f) => f.label === 'healthy').length };
    for (const [detector, score] of Object.entries(scoreFixtures(fixtures, policy))) {
      figures[`${detector} precision`] = round(score.precision);
      figures[`${detector} recall`] = round(score.recall);
      figures[`${detector} caught in time`] = `${score.inTime}/${score.labelled}`;
    }
    return figures;
  },
};

/** @param {number} value */
function round(value) {
  return Math.round(value * 10_000) / 10_000;
}
