// @ts-check
/**
 * What inspecting a real harness's request costs: the requests captured from Claude Code, Codex,
 * Cursor, Gemini CLI and opencode (test/fixtures/harness-requests/, 25–147 KB, mostly tool
 * definitions), each inspected inline with all five DLP detectors redacting, the injection
 * classifier and the anomaly detectors. `mixed` inspects them in turn, as a proxy serving several
 * harnesses does: what one request leaves warm (regex state caches) does not help the next.
 *
 * A request sent again is what a session's next turn mostly is: the same tools and the same
 * history, whose texts the proxy remembers the verdicts of. `every text new` inspects requests
 * whose every text (each string of 40 characters or more: descriptions, messages, tool results)
 * differs from all seen before: what the first request of a session costs at most.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { PII_REDACTING } from '../lib/policy.js';
import { medianSeconds } from './timing.js';

const FIXTURES = new URL('../../test/fixtures/harness-requests/', import.meta.url);
const ROUNDS = 10;
/** Strings at least this long are texts (not roles, types or names) and are made new. */
const TEXT_CHARS = 40;

/**
 * `value` with every text made new by a number appended (JSON text).
 * @param {unknown} value
 * @param {number} n
 * @returns {unknown}
 */
function withNewTexts(value, n) {
  if (typeof value === 'string') return value.length >= TEXT_CHARS ? `${value} ${n}` : value;
  if (Array.isArray(value)) return value.map((v) => withNewTexts(v, n));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withNewTexts(v, n)]));
  return value;
}

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
      .map((f) => ({ name: f.replace(/\.json$/, ''), body: JSON.parse(readFileSync(new URL(f, FIXTURES), 'utf8')).body }))
      .map((r) => ({ ...r, raw: JSON.stringify(r.body) }));
    /** @type {Record<string, number>} */
    const figures = {};
    const micros = (/** @type {string[]} */ raws) => Math.round((medianSeconds(() => {
      for (let i = 0; i < ROUNDS; i++) for (const raw of raws) inspectBody(policy, JSON.parse(raw));
    }) * 1e6) / ROUNDS / raws.length);
    figures['µs per request, mixed'] = micros(requests.map((r) => r.raw));
    // Made before timing: a new version of every request for each round of the six calls medianSeconds makes.
    const fresh = Array.from({ length: ROUNDS * 6 }, (_, n) => requests.map((r) => JSON.stringify(withNewTexts(r.body, n))));
    let next = 0;
    figures['µs per request, mixed, every text new'] = Math.round((medianSeconds(() => {
      for (let i = 0; i < ROUNDS; i++) for (const raw of fresh[next++] ?? []) inspectBody(policy, JSON.parse(raw));
    }) * 1e6) / ROUNDS / requests.length);
    for (const r of requests) figures[`µs ${r.name}`] = micros([r.raw]);
    return figures;
  },
};
