// @ts-check
/**
 * What inspecting a real harness's request costs: the requests captured from Claude Code, Codex,
 * Cursor, Gemini CLI and opencode (test/fixtures/harness-requests/, 25–147 KB, mostly tool
 * definitions), each inspected inline with all five DLP detectors redacting, the injection
 * classifier and the anomaly detectors. `mixed` inspects them in turn, as a proxy serving several
 * harnesses does: what one request leaves warm (regex state caches, remembered outcomes) does not
 * help the next.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { PII_REDACTING } from '../lib/policy.js';
import { medianSeconds } from './timing.js';

const FIXTURES = new URL('../../test/fixtures/harness-requests/', import.meta.url);
const ROUNDS = 10;

/** @type {import('./index.js').MicroBenchmark} */
export const harnessInspectBenchmark = {
  name: 'harness-inspect',
  description: "inspecting captured harness requests: µs per request, each harness alone and all of them in turn",
  async run() {
    const { inspectBody } = await import('../../dist/policy/inspect.js');
    const { buildPolicyConfig } = await import('../../dist/policy/policy-config.js');
    const policy = buildPolicyConfig({ version: 'bench', settings: { piiDetectors: PII_REDACTING }, localPii: undefined, env: {} });
    const requests = readdirSync(FIXTURES)
      .filter((f) => f.endsWith('.json'))
      .map((f) => ({ name: f.replace(/\.json$/, ''), raw: JSON.stringify(JSON.parse(readFileSync(new URL(f, FIXTURES), 'utf8')).body) }));
    /** @type {Record<string, number>} */
    const figures = {};
    const micros = (/** @type {string[]} */ raws) => Math.round((medianSeconds(() => {
      for (let i = 0; i < ROUNDS; i++) for (const raw of raws) inspectBody(policy, JSON.parse(raw));
    }) * 1e6) / ROUNDS / raws.length);
    figures['µs per request, mixed'] = micros(requests.map((r) => r.raw));
    for (const r of requests) figures[`µs ${r.name}`] = micros([r.raw]);
    return figures;
  },
};
