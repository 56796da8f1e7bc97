// @ts-check
/**
 * What WASM rules cost per evaluation, as the proxy runs them: metered, inline on the calling
 * thread, through the runner (1 and 10 rules installed), built as `svc policy compile` builds them
 * and, beside them, with asc's default runtime and garbage collector (as a rule built by other
 * means); and the fuel the call spends. Ten rules are timed on a benign shell command every
 * example rule allows, which runs no `rm`, so the `destructive-shell` copies, which declare it
 * (`svc_programs`), are skipped; and on a call that runs `rm` and `git`, on which every rule runs.
 * One rule (`destructive-shell`) is timed on the latter. Ten rules are also timed with the caches
 * cold, as the proxy runs them between requests. Each timed call is new to the rules (its command
 * numbered), so they run on it; ten rules are also timed on a call seen before, whose verdicts an
 * arena rule remembers (verdict-memo.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertAllowed, BENCH_RULE_CALL, installedRulesDir, readInstalled } from '../lib/wasm-rules.js';
import { medianSeconds } from './timing.js';

/** A call every example rule allows and none can skip. */
const RUNS_EVERY_RULE = { ...BENCH_RULE_CALL, toolArguments: JSON.stringify({ command: 'rm -rf ./build && git status && ls -la src/ | head -n 20' }) };
const ROUNDS = 5000;
const WARM_UP = 50_000;
/** Calls told apart by a number in their command: far more than a rule's verdict memo holds (about a thousand such calls). */
const NEW_CALLS = 8192;

/**
 * Calls like \`call\`, each command numbered (\`ls -la src/17/\`), answered in turn: each is new to
 * the rules, which run on it (a call seen before gets the verdicts they reached on it).
 * @param {typeof BENCH_RULE_CALL} call
 * @returns {() => typeof BENCH_RULE_CALL}
 */
function newCalls(call) {
  const { command } = JSON.parse(call.toolArguments);
  const calls = Array.from({ length: NEW_CALLS }, (_, i) => ({ ...call, toolArguments: JSON.stringify({ command: command.replace('src/', `src/${i}/`) }) }));
  let next = 0;
  return () => /** @type {typeof BENCH_RULE_CALL} */ (calls[next++ % NEW_CALLS]);
}

/** What the proxy's own work between two requests touches, about: enough to push the rules out of the caches. */
const COLD_BYTES = 4 << 20;
const COLD_ROUNDS = 2000;

/**
 * µs per call of `fn` with COLD_BYTES written before each call, as a proxy runs its rules between
 * requests: the median call, less the median time of timing nothing the same way (calls of both
 * alternate, so a busy spell of the machine weighs on both alike).
 * @param {() => void} fn
 */
function coldMicroseconds(fn) {
  const junk = new Uint8Array(COLD_BYTES);
  const nothing = () => {};
  /** @type {number[][]} */
  const times = [[], []];
  for (let i = 0; i < COLD_ROUNDS * 2; i++) {
    for (let at = 0; at < junk.length; at += 64) junk[at] = (junk[at] ?? 0) + 1;
    const start = performance.now();
    (i % 2 === 0 ? fn : nothing)();
    times[i % 2]?.push(performance.now() - start);
  }
  const median = (/** @type {number[]} */ list) => /** @type {number} */ (list.sort((a, b) => a - b)[list.length >> 1]);
  return Math.round((median(/** @type {number[]} */ (times[0])) - median(/** @type {number[]} */ (times[1]))) * 1000 * 100) / 100;
}

/** @type {import('./index.js').MicroBenchmark} */
export const wasmRulesBenchmark = {
  name: 'wasm-rules',
  description: 'WASM rules: µs per evaluation of 1 and 10 rules, metered inline, as svc builds them and with the incremental runtime, 10 on a call none can skip, with the caches cold and on a call seen before, and the fuel spent',
  async run() {
    const { buildSnapshot } = await import('../../dist/policy/wasm/snapshot.js');
    const { WasmRuleRunner } = await import('../../dist/policy/wasm/runner.js');
    const { RuleInstance, Subject } = await import('../../dist/policy/wasm/instance.js');
    const { meteredModule } = await import('../../dist/policy/wasm/metering.js');
    const { createLogger } = await import('../../dist/lib/logger.js');
    const work = await mkdtemp(join(tmpdir(), 'svc-bench-wasm-'));
    /** @type {Record<string, number>} */
    const figures = {};
    const runner = new WasmRuleRunner({ memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
    try {
      for (const build of /** @type {const} */ (['svc', 'incremental'])) {
        const all = await readInstalled(await installedRulesDir(10, work, build));
        const built = build === 'svc' ? '' : ', incremental runtime';
        for (const count of [1, 10]) {
          const label = `${count} rule${count > 1 ? 's' : ''}${built}`;
          const set = buildSnapshot(all.slice(0, count));
          // One rule (a destructive-shell copy) is timed on the call that runs it; ten on both calls.
          const calls = count === 1 ? { ', on a call that runs it': RUNS_EVERY_RULE } : { '': BENCH_RULE_CALL, ', a call that runs rm (none skipped)': RUNS_EVERY_RULE };
          for (const [which, call] of Object.entries(calls)) {
            assertAllowed(await runner.evaluate(set, /** @type {any} */ (call)));
            const next = newCalls(call);
            // WebAssembly is compiled optimised in the background once it has run a while: warm up long enough for that.
            for (let i = 0; i < WARM_UP; i++) void runner.evaluate(set, /** @type {any} */ (next()));
            // The runner answers at once once its modules are metered; awaiting only adds a microtask.
            const metered = medianSeconds(() => {
              for (let i = 0; i < ROUNDS; i++) void runner.evaluate(set, /** @type {any} */ (next()));
            });
            figures[`metered inline µs, ${label}${which}`] = Math.round(((metered * 1e6) / ROUNDS) * 100) / 100;
          }
          if (count === 10) {
            const next = newCalls(BENCH_RULE_CALL);
            figures[`metered inline µs, ${label}, caches cold`] = coldMicroseconds(() => void runner.evaluate(set, /** @type {any} */ (next())));
            // The untimed first round of these also ends any standing aside the new calls before left the memos in.
            const seen = medianSeconds(() => {
              for (let i = 0; i < ROUNDS; i++) void runner.evaluate(set, /** @type {any} */ (BENCH_RULE_CALL));
            });
            figures[`metered inline µs, ${label}, a call seen before`] = Math.round(((seen * 1e6) / ROUNDS) * 100) / 100;
          }
          if (build !== 'svc') continue;
          let spent = 0;
          for (const r of all.slice(0, count)) {
            const m = meteredModule(r.sha256);
            if (m === undefined || 'error' in m) throw new Error(`${r.name} was not metered`);
            const instance = new RuleInstance(m.module, m.memory, 256, 2 ** 30);
            instance.evaluate(new Subject(/** @type {any} */ (BENCH_RULE_CALL)));
            spent += instance.spent;
          }
          figures[`fuel spent, ${label}`] = spent;
        }
      }
    } finally {
      await runner.close();
      await rm(work, { recursive: true, force: true });
    }
    return figures;
  },
};
