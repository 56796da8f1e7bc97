import type { ActiveRule, DecideEngine, Outcome } from './evaluate.js';
import { percentile } from './latency.js';

export interface EvalCase {
  readonly subject: string;
  readonly expect: 'refuse' | 'allow' | 'escalate';
}

export interface EvalResult {
  readonly rule: string;
  readonly ruleHash: string;
  readonly model: string | null;
  readonly accuracy: number;
  readonly p95Ms: number;
  readonly passed: boolean;
  /** Why it did not pass, when it did not. */
  readonly failure: string | null;
  readonly cases: readonly { readonly index: number; readonly expect: EvalCase['expect']; readonly outcome: Outcome; readonly correct: boolean; readonly latencyMs: number }[];
}

/** Cases asked at once: enough to keep a model server busy, few enough not to swamp it. */
const CONCURRENCY = 4;

/**
 * Runs a rule over labelled cases, fresh (no cached answers). It passes when accuracy reaches
 * `minAccuracy`, no case was unanswerable, and the p95 fits the engine's timeout.
 */
export async function runEval(engine: DecideEngine, active: ActiveRule, cases: readonly EvalCase[], minAccuracy: number): Promise<EvalResult> {
  const results: EvalResult['cases'][number][] = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const index = next++;
      const c = cases[index]!;
      const d = await engine.evaluate(active, c.subject, { canAskPerson: true, fresh: true });
      results[index] = { index, expect: c.expect, outcome: d.outcome, correct: d.outcome === c.expect, latencyMs: d.latencyMs };
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, cases.length) }, worker));
  const accuracy = results.filter((r) => r.correct).length / results.length;
  const p95Ms = percentile(results.map((r) => r.latencyMs), 0.95);
  const unavailable = results.filter((r) => r.outcome === 'unavailable').length;
  const failure =
    unavailable > 0
      ? `${unavailable} case(s) could not be evaluated`
      : accuracy < minAccuracy
        ? `accuracy ${accuracy.toFixed(3)} is below ${minAccuracy}`
        : p95Ms > engine.timeoutMs
          ? `p95 of ${Math.round(p95Ms)} ms exceeds the engine timeout of ${engine.timeoutMs} ms`
          : null;
  return { rule: active.rule.record.id, ruleHash: active.rule.hash, model: engine.model, accuracy, p95Ms, passed: failure === null, failure, cases: results };
}
