// @ts-check
/**
 * What inspecting a request costs on the main thread versus a round trip to a policy worker,
 * for 1 KB, 100 KB and 1 MB prompts with the default policy (card, IBAN and SSN redaction plus
 * the injection patterns). The proxy's `limits.inlineInspectMaxBytes` is chosen from these. Each
 * request's prompt is new (numbered), so no verdict remembered from an earlier one helps it.
 */
import { medianSeconds } from './timing.js';

const SIZES = [
  ['1KB', 1024],
  ['100KB', 100 * 1024],
  ['1MB', 1024 * 1024],
];
const PROSE =
  'The deploy script reads config from env, retries twice, then writes logs to /var/log/app.log at 2026-11-21T06:18:23Z; ' +
  'build 4.12.7 passed 318 tests in 41.2 s (commit 9f3c2e1). ';

/**
 * @param {number} bytes
 * @param {number} n  numbers the prompt
 */
function requestOf(bytes, n) {
  const content = `${n} ${PROSE.repeat(Math.ceil(bytes / PROSE.length))}`.slice(0, bytes);
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'You are terse.' }, { role: 'user', content }] };
  const raw = Buffer.from(JSON.stringify(body));
  return { raw, parsed: () => JSON.parse(raw.toString('utf8')) };
}

/** @type {import('./index.js').MicroBenchmark} */
export const inspectBenchmark = {
  name: 'inspect',
  description: 'request inspection: µs inline on the main thread vs a round trip to a policy worker',
  async run() {
    const { PolicyEngine } = await import('../../dist/policy/engine.js');
    const { buildPolicyConfig } = await import('../../dist/policy/policy-config.js');
    const { createLogger } = await import('../../dist/lib/logger.js');
    const policy = buildPolicyConfig({ version: 'bench', settings: {}, localPii: undefined, env: {} });
    const logger = createLogger('silent');
    const inline = new PolicyEngine({ threads: 1, inlineMaxBytes: Number.MAX_SAFE_INTEGER, logger });
    const worker = new PolicyEngine({ threads: 1, inlineMaxBytes: 0, logger });
    /** @type {Record<string, number>} */
    const figures = {};
    try {
      for (const [label, bytes] of SIZES) {
        // Enough rounds that JIT warm-up does not dominate small sizes; the worker loop is capped.
        const rounds = Math.max(3, Math.round(4_000_000 / /** @type {number} */ (bytes)));
        const workerRounds = Math.min(rounds, 2000);
        let made = 0;
        // Each timed pass inspects prompts made and parsed for it before it starts.
        /** @type {Array<{ raw: Buffer, body: unknown }>} */
        let batch = [];
        const prepare = () => {
          batch = Array.from({ length: rounds }, () => {
            const { raw, parsed } = requestOf(/** @type {number} */ (bytes), made++);
            return { raw, body: parsed() };
          });
        };
        const inlineSeconds = medianSeconds(() => {
          for (const { raw, body } of batch) void inline.inspect(policy, body, raw);
        }, 5, prepare);
        const first = requestOf(/** @type {number} */ (bytes), made++);
        await worker.inspect(policy, first.parsed(), first.raw); // start the worker and compile the policy there
        const raws = Array.from({ length: workerRounds }, () => requestOf(/** @type {number} */ (bytes), made++).raw);
        const start = performance.now();
        for (const raw of raws) await worker.inspect(policy, null, raw);
        const workerMs = performance.now() - start;
        figures[`inline µs ${label}`] = Math.round((inlineSeconds * 1e6) / rounds);
        figures[`worker µs ${label}`] = Math.round((workerMs * 1e3) / workerRounds);
      }
    } finally {
      await inline.close();
      await worker.close();
    }
    return figures;
  },
};
