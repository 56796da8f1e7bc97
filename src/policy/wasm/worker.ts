import { checkRules, evaluateRules, type EvaluationResult, type RuleCheck, type RuleTask } from './evaluator.js';

/** The Piscina entry of the WASM rule pool: rules run here, never on the main thread. */
export default function run(task: RuleTask): EvaluationResult | RuleCheck[] {
  return task.op === 'evaluate' ? evaluateRules(task) : checkRules(task);
}
