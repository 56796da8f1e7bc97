import { detectCodeAsAction } from './code-as-action.js';
import { detectDlpEscalation, type DlpSighting } from './dlp-escalation.js';
import type { AnomalyFinding, LoopFinding } from './finding.js';
import { extractHistory, fingerprintOf, fingerprintParts, type FingerprintParts } from './history.js';
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
   * the proxy's own thread only when no header names the session; a worker computes it before
   * handing the report back (plainReport).
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
  return new Report(findings, tools.toolPins, body);
}

/**
 * A report whose fingerprint is computed when first read, from the few parts of the body it is made
 * of: the report lives as long as its request, and keeping the whole body for it kept the request's
 * parse alive while the upstream answered. The getter is the class's, so every report shares one
 * hidden class: an object literal with a getter of its own is made a dictionary, which kept the
 * request's objects alive past their request and into the old generation (bench/README.md,
 * "Garbage collection"). Its fields are the report's only own properties.
 */
class Report implements AnomalyReport {
  readonly #parts: FingerprintParts;
  #fingerprint: string | undefined;

  constructor(
    readonly findings: ReadonlyArray<AnomalyFinding | LoopFinding>,
    readonly toolPins: Readonly<Record<string, ToolPin>>,
    body: JsonObject,
  ) {
    this.#parts = fingerprintParts(body);
  }

  get fingerprint(): string {
    return (this.#fingerprint ??= fingerprintOf(this.#parts));
  }
}

/** The report as plain data, its fingerprint computed: what a worker hands back to the main thread. */
export function plainReport(report: AnomalyReport | null): AnomalyReport | null {
  return report === null ? null : { findings: report.findings, toolPins: report.toolPins, fingerprint: report.fingerprint };
}
