import { answerFor, type Band } from './band.js';
import type { CanaryQuestion } from './engine-config.js';
import { EngineUnavailable, type ModelClient } from './model-client.js';

export type CanaryResult = { readonly passed: true } | { readonly passed: false; readonly detail: string };

/**
 * Asks every known-answer question; the engine passes only when each lands in its expected band.
 * A model that cannot tell "two plus two is four" from its opposite must not judge SOPs.
 */
export async function runCanary(client: ModelClient, canaries: readonly CanaryQuestion[], band: Band, timeoutMs: number): Promise<CanaryResult> {
  try {
    const answers = await Promise.all(canaries.map((c) => client.askYesNo(c.ask, c.subject, timeoutMs)));
    for (let i = 0; i < canaries.length; i++) {
      const got = answerFor(answers[i]!.pYes, band);
      if (got !== canaries[i]!.expect) {
        return { passed: false, detail: `known-answer question ${i + 1} answered ${got} (p(yes) ${answers[i]!.pYes.toFixed(3)}), expected ${canaries[i]!.expect}` };
      }
    }
    return { passed: true };
  } catch (err) {
    if (err instanceof EngineUnavailable) return { passed: false, detail: `known-answer question not answered: ${err.message}` };
    throw err;
  }
}
