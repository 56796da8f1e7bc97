import type { Logger } from '../lib/logger.js';
import type { DecideRuntime } from '../decide/runtime.js';
import type { RuleDecision } from '../decide/evaluate.js';
import type { Finding } from '../policy/inspect.js';
import type { Exchange } from './exchange.js';
import { carriesNotes, type JudgeText } from './response-notes.js';
import type { ProviderRoute } from './routes.js';

/** A decide outcome on the trace, shadow ones included: never the response text. */
function findingOf(d: RuleDecision): Finding {
  const pYes = Object.values(d.answers).map((a) => a.pYes ?? 0);
  return {
    detector: `decide.${d.rule}${d.stamp === 'shadow' ? '.shadow' : ''}`,
    where: `response:${d.outcome}`,
    message: null,
    kind: 'message',
    action: d.outcome === 'refuse' ? 'block' : 'warn',
    confidence: d.score ?? (pYes.length > 0 ? Math.max(...pYes) : 0),
  };
}

/**
 * The response-path judge for one request: the note decide `on: response` rules write, recorded
 * on the trace (HIJACK: the agent is steered by it). Under shadow enforcement the outcome is only
 * recorded. Null when no rule judges this route's responses.
 */
export function responseNotesFor(decide: DecideRuntime | null, ex: Exchange, route: ProviderRoute, shadow: boolean, logger: Logger): JudgeText | null {
  if (decide === null || !route.inspectsResponse || !carriesNotes(route.kind) || !decide.judgesResponses) return null;
  return async (text) => {
    try {
      const note = await decide.noteFor(text, { traceId: ex.id, record: (d) => d.outcome !== 'allow' && ex.findings.push(findingOf(d)) });
      if (note === null) return null;
      ex.warnings.push(`decide_${note.verdict.toLowerCase()}:${note.rule}`);
      if (shadow) return null;
      ex.enforcement = 'HIJACK';
      return note.text;
    } catch (err) {
      logger.error({ err, traceId: ex.id }, 'decide response judge failed; the response is relayed without a note');
      return null;
    }
  };
}
