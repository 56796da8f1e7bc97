import { detectCodeAsAction } from './code-as-action.js';
import { detectDlpEscalation } from './dlp-escalation.js';
import type { AnomalyFinding, LoopFinding } from './finding.js';
import { extractHistory } from './history.js';
import { detectLoops } from './loops.js';
import { detectPoisonedTools, toolHashes } from './poisoning.js';

/** What the stateless detectors report for one request body; it crosses back from the workers as plain data. */
export interface AnomalyReport {
  readonly findings: ReadonlyArray<AnomalyFinding | LoopFinding>;
  /** Per offered tool, the hash of its description and schema (rug-pull detection on the main thread). */
  readonly toolHashes: Readonly<Record<string, string>>;
  /** Names the session when the request carries no `x-session-id`. */
  readonly fingerprint: string;
}

/** Whether a body carries a conversation (`messages` or Responses `input`): a response body does not. */
function carriesConversation(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const b = body as Record<string, unknown>;
  return Array.isArray(b.messages) || b.input !== undefined;
}

/**
 * Runs every stateless anomaly detector over a request body; null when it carries no
 * conversation. `dlpFindingMessages` holds, per DLP finding of this body, the index of the
 * message it is in.
 */
export function detectAnomalies(body: unknown, dlpFindingMessages: readonly number[]): AnomalyReport | null {
  if (!carriesConversation(body)) return null;
  const history = extractHistory(body);
  const findings: Array<AnomalyFinding | LoopFinding> = [...detectLoops(history.calls)];
  for (const f of [detectCodeAsAction(history), detectPoisonedTools(history.tools), detectDlpEscalation(dlpFindingMessages, history.turnOfMessage)]) {
    if (f !== null) findings.push(f);
  }
  return { findings, toolHashes: toolHashes(history.tools), fingerprint: history.fingerprint };
}
