// @ts-check
/**
 * What other work done between two requests costs the requests' own work on this machine: a
 * stand-in for a request's own work (parse a 1.3 KB chat body, change it, stringify and hash it,
 * keep the last 200 as a server keeps state) timed alone, then with each run followed by the ten
 * bench WASM rules, then by a loop of arithmetic that touches no memory, sized to take as long
 * as the rules. On a machine whose caches other tenants share, the stand-in is slower after
 * either, and the longer the pause the slower: part of what any added step costs a request is
 * paid by the rest of the request (see the `tool-call-wasm10` scenario).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertAllowed, BENCH_RULE_CALL, installedRulesDir, readInstalled } from '../lib/wasm-rules.js';

const BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Refactor the session cache so that entries expire after the configured idle time. '.repeat(16) }],
  tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
});
const RUNS = 20_000;
const WINDOWS = 7;

/** @type {unknown[]} */
const kept = [];
function requestWork() {
  const request = JSON.parse(BODY);
  request.metadata = { trace: kept.length, tags: ['a', 'b'] };
  kept.push(request);
  if (kept.length > 200) kept.shift();
  const text = JSON.stringify(request);
  return createHash('sha256').update(text).digest('hex').length + text.length;
}

let sink = 0;
/** @param {number} iterations */
function arithmetic(iterations) {
  let x = 1;
  for (let i = 0; i < iterations; i++) x = (x * 1103515245 + 12345) | 0;
  sink += x;
}

/**
 * Median over windows of µs per run of the stand-in, and of what follows it.
 * @param {(() => void) | null} between
 */
function timed(between) {
  /** @type {Array<[number, number]>} */
  const windows = [];
  for (let w = 0; w < WINDOWS + 1; w++) {
    let own = 0n;
    let other = 0n;
    for (let i = 0; i < RUNS; i++) {
      const start = process.hrtime.bigint();
      sink += requestWork();
      const mid = process.hrtime.bigint();
      own += mid - start;
      if (between !== null) {
        between();
        other += process.hrtime.bigint() - mid;
      }
    }
    // The first window warms up.
    if (w > 0) windows.push([Number(own) / RUNS / 1000, Number(other) / RUNS / 1000]);
  }
  const median = (/** @type {number[]} */ xs) => /** @type {number} */ (xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]);
  return { own: median(windows.map((w) => w[0])), other: median(windows.map((w) => w[1])) };
}

const round = (/** @type {number} */ x) => Math.round(x * 100) / 100;

/** @type {import('./index.js').MicroBenchmark} */
export const interferenceBenchmark = {
  name: 'interference',
  description: 'µs of a request-like task alone, after the ten bench WASM rules, and after arithmetic as long that touches no memory',
  async run() {
    const { buildSnapshot } = await import('../../dist/policy/wasm/snapshot.js');
    const { WasmRuleRunner } = await import('../../dist/policy/wasm/runner.js');
    const { createLogger } = await import('../../dist/lib/logger.js');
    const work = await mkdtemp(join(tmpdir(), 'svc-bench-interference-'));
    const runner = new WasmRuleRunner({ memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
    try {
      const set = buildSnapshot(await readInstalled(await installedRulesDir(10, work)));
      assertAllowed(await runner.evaluate(set, /** @type {any} */ (BENCH_RULE_CALL)));
      const rules = () => void runner.evaluate(set, /** @type {any} */ (BENCH_RULE_CALL));
      const alone = timed(null);
      const afterRules = timed(rules);
      // As many iterations as take the rules' time.
      const probe = 1_000_000;
      arithmetic(probe);
      const started = performance.now();
      arithmetic(probe);
      const nsPerIteration = ((performance.now() - started) * 1e6) / probe;
      const iterations = Math.round((afterRules.other * 1000) / nsPerIteration);
      const afterArithmetic = timed(() => arithmetic(iterations));
      return {
        'request stand-in µs, alone': round(alone.own),
        'request stand-in µs, after ten rules': round(afterRules.own),
        'ten rules µs': round(afterRules.other),
        'request stand-in µs, after arithmetic as long': round(afterArithmetic.own),
        'arithmetic µs': round(afterArithmetic.other),
      };
    } finally {
      await runner.close();
      await rm(work, { recursive: true, force: true });
    }
  },
};
