import { detectCodeAsAction } from './code-as-action.js';
import { detectDlpEscalation, type DlpSighting } from './dlp-escalation.js';
import type { AnomalyFinding, LoopFinding } from './finding.js';
import { extractHistory, fingerprintOf } from './history.js';
import { detectLoops } from './loops.js';
import type { ToolPin } from './poisoning.js';
import { judgeToolSet } from './tool-set.js';
import { isJsonObject, type JsonObject } from '../../lib/json.js';

/** What the stateless detectors report for one request body; it crosses back from the workers as plain data. */
export interface AnomalyReport {
  readonly findings: ReadonlyArray<AnomalyFinding | LoopFinding>;
  /** Per offered tool, its pin: its definition's hash and instructions (rug-pull detection on the main thread). */
  readonly toolPins: Readonly<Record<string, ToolPin>>;
  /**
   * Names the session when the request carries no session header. Computed when first read: in
   * the proxy's own thread only when no header names the session; a report from a worker has it
   * computed as it is copied back.
   */
  readonly fingerprint: string;
}

/** Whether a body carries a conversation (`messages`, Responses `input`, Gemini `contents`): a response body does not. */
function carriesConversation(body: unknown): body is JsonObject {
  return isJsonObject(body) && (Array.isArray(body.messages) || body.input !== undefined || Array.isArray(body.contents));
}

/**
 * Runs every stateless anomaly detector over a request body; null when it carries no
 * conversation. `dlpSightings` holds the values DLP found in the body's messages that count
 * as sensitive (published test card numbers do not).
 */
export function detectAnomalies(body: unknown, dlpSightings: readonly DlpSighting[]): AnomalyReport | null {
  if (!carriesConversation(body)) return null;
  const history = extractHistory(body);
  const tools = judgeToolSet(body);
  const findings: Array<AnomalyFinding | LoopFinding> = [...detectLoops(history.calls)];
  for (const f of [detectCodeAsAction(history), tools.poisoning, detectDlpEscalation(dlpSightings, history.turnOfMessage)]) {
    if (f !== null) findings.push(f);
  }
  let fingerprint: string | undefined;
  return {
    findings,
    toolPins: tools.toolPins,
    get fingerprint() {
      return (fingerprint ??= fingerprintOf(body));
    },
  };
}
