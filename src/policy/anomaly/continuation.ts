import type { RouteKind } from '../../lib/route-kind.js';
import { carriesExecutingCode } from './code-as-action.js';
import type { AnomalyFinding, LoopFinding } from './finding.js';
import { extractHistory, type ToolHistory } from './history.js';
import { isJsonObject } from '../../lib/json.js';

/** The model's answer read as a one-turn history, whatever the route's response shape. */
function answerHistory(kind: RouteKind, answer: unknown): ToolHistory {
  if (!isJsonObject(answer)) return extractHistory(null);
  if (kind === 'messages') return extractHistory({ messages: [{ role: 'assistant', content: answer.content }] });
  if (kind === 'responses') return extractHistory({ input: Array.isArray(answer.output) ? answer.output : [] });
  const choice = Array.isArray(answer.choices) ? answer.choices[0] : undefined;
  return extractHistory({ messages: isJsonObject(choice) && isJsonObject(choice.message) ? [{ ...choice.message, role: 'assistant' }] : [] });
}

/**
 * Whether the model's answer carries on with what drew the reask: it makes one of a loop's calls
 * again, emits executing code again, calls a tool flagged as poisoned, or (escalating DLP) goes
 * on calling tools.
 */
export function answerContinues(kind: RouteKind, answer: unknown, acting: ReadonlyArray<AnomalyFinding | LoopFinding>): boolean {
  const history = answerHistory(kind, answer);
  return acting.some((f) => {
    if ('loopKeys' in f) return history.calls.some((c) => f.loopKeys.includes(c.key));
    switch (f.detector) {
      case 'code_as_action':
        return history.calls.some(carriesExecutingCode) || history.assistantTexts.some(carriesExecutingCode);
      case 'tool_poisoning':
        return history.calls.some((c) => f.tools.includes(c.tool));
      default:
        return history.calls.length > 0;
    }
  });
}
