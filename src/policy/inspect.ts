import type { StringEdit } from '../lib/json-splice.js';
import { detectAnomalies, type AnomalyReport } from './anomaly/detect.js';
import type { DlpSighting } from './anomaly/dlp-escalation.js';
import { isPublishedTestCard } from './dlp/published-test-cards.js';
import { redact, type DlpMatch } from './dlp/index.js';
import { enginesFor } from './engines.js';
import { InjectionClassifier } from './injection/index.js';
import type { PolicyConfig } from './policy-config.js';
import { describePath, messageIndexOf, setText, walkTexts, type TextKind } from './walk.js';

export type FindingAction = 'redact' | 'block' | 'warn';

/** What a detector found, and where: never the matched text. */
export interface Finding {
  readonly detector: string;
  /** The JSON location, e.g. `messages[3].content`. */
  readonly where: string;
  readonly message: number | null;
  readonly kind: TextKind;
  readonly action: FindingAction;
  readonly confidence: number;
}

export type Verdict = 'pass' | 'modified' | 'blocked';

export interface Inspection {
  /** In shadow mode always `pass`: the findings say what would have happened. */
  readonly verdict: Verdict;
  readonly findings: readonly Finding[];
  /** The first blocking finding, when the verdict is `blocked` (or would have been, in shadow mode). */
  readonly blockedBy: Finding | null;
  readonly shadow: boolean;
  /** What the anomaly detectors found in the tool-call history; null when they are off or there is no conversation. */
  readonly anomaly: AnomalyReport | null;
}

/**
 * Inspects a parsed request or response body in place: DLP over every text leaf (redacting
 * where the policy says so), the prompt-injection classifier over tool results and descriptions.
 * Pure apart from the redaction it writes into `body`, each of which it adds to `edits` when
 * given; in shadow mode `body` is left untouched.
 */
export function inspectBody(policy: PolicyConfig, body: unknown, edits?: StringEdit[]): Inspection {
  const engines = enginesFor(policy);
  const findings: Finding[] = [];
  let blockedBy: Finding | null = null;
  let modified = false;
  const sightings: DlpSighting[] = [];
  walkTexts(body, (leaf) => {
    // Most leaves hold nothing: their location is written out only for a finding.
    let where: string | undefined;
    const message = messageIndexOf(leaf.path);
    if (engines.dlpScan !== null) {
      const matches = engines.dlpScan(leaf.text);
      const toRedact: DlpMatch[] = [];
      for (const m of matches) {
        const action = policy.pii[m.detector]!;
        const finding: Finding = { detector: m.detector, where: (where ??= describePath(leaf.path)), message, kind: leaf.kind, action, confidence: m.confidence };
        findings.push(finding);
        if (action === 'block') blockedBy ??= finding;
        else toRedact.push(m);
        const value = leaf.text.slice(m.start, m.end);
        if (message !== null && !isPublishedTestCard(m.detector, value)) sightings.push({ message, value: normalised(value) });
      }
      if (toRedact.length > 0 && !policy.shadow) {
        const redacted = redact(leaf.text, toRedact);
        setText(body, leaf.path, redacted);
        edits?.push({ before: leaf.text, after: redacted });
        modified = true;
      }
    }
    // Injection is read in what tools hand back and how tools describe themselves; only a
    // finding at or above the block threshold blocks, one below it is recorded as a warning.
    if (!leaf.numeric && InjectionClassifier.applies(leaf.kind)) {
      const hit = engines.injection.scan(leaf.text, leaf.kind);
      if (hit !== null) {
        const action: FindingAction = policy.injection.action === 'block' && hit.confidence >= policy.injection.blockThreshold ? 'block' : 'warn';
        const finding: Finding = { detector: hit.id, where: (where ??= describePath(leaf.path)), message, kind: leaf.kind, action, confidence: hit.confidence };
        findings.push(finding);
        if (action === 'block') blockedBy ??= finding;
      }
    }
  });
  const anomaly =
    policy.anomaly.mode === 'off'
      ? null
      : detectAnomalies(body, sightings);
  const verdict: Verdict = policy.shadow ? 'pass' : blockedBy !== null ? 'blocked' : modified ? 'modified' : 'pass';
  return { verdict, findings, blockedBy, shadow: policy.shadow, anomaly };
}

/** One spelling per value: `4111 1111…` and `4111-1111…`, `Jane@X.com` and `jane@x.com` are the same. */
function normalised(value: string): string {
  return value.replace(/[\s().-]+/g, '').toLowerCase();
}
