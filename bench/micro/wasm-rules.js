// @ts-check
/**
 * What WASM rules cost per evaluation: inside a worker (the rule code and its host accessors,
 * as the pool runs them) and through the pool from the main thread (plus the round trip), with 1
 * and 10 rules installed. The call is a benign shell command every example rule allows, so every
 * rule runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installedRulesDir, readInstalled } from '../lib/wasm-rules.js';
import { medianSeconds } from './timing.js';

const CONTEXT = {
  kind: 'tool_call',
  toolName: 'bash',
  toolArguments: JSON.stringify({ command: 'git status && ls -la src/ | head -n 20' }),
  toolInput: 'json',
  model: 'gpt-4o-mini',
  harness: 'claude-code',
  session: 's-1',
  workspace: 'bench',
  text: null,
};
const IN_THREAD_ROUNDS = 20_000;
const POOL_ROUNDS = 2000;

/** @type {import('./index.js').MicroBenchmark} */
export const wasmRulesBenchmark = {
  name: 'wasm-rules',
  description: 'WASM rules: µs per evaluation of 1 and 10 rules, in a worker and through the pool',
  async run() {
    const { buildSnapshot } = await import('../../dist/policy/wasm/snapshot.js');
    const { evaluateRules, PROGRESS_BYTES } = await import('../../dist/policy/wasm/evaluator.js');
    const { WasmRuleRunner } = await import('../../dist/policy/wasm/runner.js');
    const { createLogger } = await import('../../dist/lib/logger.js');
    const work = await mkdtemp(join(tmpdir(), 'svc-bench-wasm-'));
    /** @type {Record<string, number>} */
    const figures = {};
    try {
      const all = await readInstalled(await installedRulesDir(10, work));
      for (const count of [1, 10]) {
        const set = buildSnapshot(all.slice(0, count));
        /** @type {import('../../dist/policy/wasm/evaluator.js').EvaluateTask} */
        const task = { op: 'evaluate', set, context: /** @type {any} */ (CONTEXT), startAt: 0, failurePolicy: 'closed', memoryCapPages: 256, progress: new SharedArrayBuffer(PROGRESS_BYTES) };
        const verdict = evaluateRules(task);
        if (verdict.verdict !== null || verdict.failures.length > 0) throw new Error(`the benchmark call was not allowed: ${JSON.stringify(verdict)}`);
        const seconds = medianSeconds(() => {
          for (let i = 0; i < IN_THREAD_ROUNDS; i++) evaluateRules(task);
        });
        const perEvaluation = (seconds * 1e6) / IN_THREAD_ROUNDS;
        figures[`in-worker µs, ${count} rule${count > 1 ? 's' : ''}`] = Math.round(perEvaluation * 100) / 100;
        figures[`in-worker µs per rule, ${count} rule${count > 1 ? 's' : ''}`] = Math.round((perEvaluation / count) * 100) / 100;

        const runner = new WasmRuleRunner({ threads: 1, deadlineMs: 1000, memoryCapPages: 256, failurePolicy: 'closed', logger: createLogger('silent') });
        try {
          await runner.evaluate(set, /** @type {any} */ (CONTEXT));
          const start = performance.now();
          for (let i = 0; i < POOL_ROUNDS; i++) await runner.evaluate(set, /** @type {any} */ (CONTEXT));
          figures[`through the pool µs, ${count} rule${count > 1 ? 's' : ''}`] = Math.round(((performance.now() - start) * 1e3) / POOL_ROUNDS);
        } finally {
          await runner.close();
        }
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    return figures;
  },
};
