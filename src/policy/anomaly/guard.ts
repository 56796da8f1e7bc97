import { ACT_CONFIDENCE, ACTION_RANK, type AnomalyAction, type AnomalyMode, type AnomalyPolicy, type AnomalyResponse } from './anomaly-policy.js';
import { renderCard } from './card.js';
import type { AnomalyReport } from './detect.js';
import type { AnomalyFinding, LoopFinding } from './finding.js';
import { redefinedToolsFinding, type ToolPin } from './poisoning.js';
import type { SessionMemory } from './sessions.js';

/** What a session's memory is judged by: a request's report without what names its session. */
export type SessionReport = Pick<AnomalyReport, 'findings' | 'toolPins'>;

/** A finding as the trace shows it, with what the gateway did about it. */
export interface TracedAnomalyFinding extends AnomalyFinding {
  /** The response it drew, `report` when it was only recorded. */
  readonly action: AnomalyResponse | 'report';
  /** Findings of this detector so far in the session (at or above anomaly_enforcement.minConfidence). */
  readonly sessionCount: number;
}

export interface AnomalyDecision {
  readonly mode: AnomalyMode;
  readonly findings: readonly TracedAnomalyFinding[];
  /** The strongest response drawn, or null. */
  readonly response: AnomalyResponse | null;
  /** The findings that drew it (reask tests the model's answer against them). */
  readonly acting: ReadonlyArray<AnomalyFinding | LoopFinding>;
  readonly card: string | null;
}

function lower(a: AnomalyAction, b: AnomalyAction): AnomalyAction {
  return ACTION_RANK[a] <= ACTION_RANK[b] ? a : b;
}

/**
 * What one finding draws under the policy, given how often its detector fired in the session.
 * A category anomaly_enforcement covers waits for minRepeats findings at minConfidence, then
 * draws its action (HIJACK steers, KILL blocks, as seed 001 says), capped by an override; any
 * other acts on each finding at ACT_CONFIDENCE with the detector's own action.
 */
function responseTo(policy: AnomalyPolicy, finding: AnomalyFinding, count: number): AnomalyAction {
  const e = policy.enforcement;
  if (e.enabled && (e.categories.length === 0 || e.categories.includes(finding.detector))) {
    if (count < e.minRepeats || finding.confidence < e.minConfidence) return 'off';
    const action: AnomalyAction = e.action === 'KILL' ? 'kill' : 'steer';
    const override = policy.overrides[finding.detector];
    return override === undefined ? action : lower(action, override);
  }
  return finding.confidence < ACT_CONFIDENCE ? 'off' : policy.actions[finding.detector];
}

/**
 * Judges one request's anomaly report against the session's memory (updating it): adds the rug
 * pull, counts findings, and picks the response. In warn mode, and in shadow mode, nothing is
 * drawn; findings are recorded all the same.
 */
export function decideAnomaly(policy: AnomalyPolicy, report: SessionReport, memory: SessionMemory, shadow: boolean): AnomalyDecision {
  const findings: Array<AnomalyFinding | LoopFinding> = [...report.findings];
  const changes: Array<{ tool: string; before: ToolPin; after: ToolPin }> = [];
  for (const [tool, after] of Object.entries(report.toolPins)) {
    const before = memory.toolPins.get(tool);
    if (before !== undefined && before.hash !== after.hash) changes.push({ tool, before, after });
    // A rug pull keeps the pin it broke, so the tool stays refused; a rewording becomes the new pin.
    if (before === undefined) memory.toolPins.set(tool, after);
  }
  if (changes.length > 0) {
    const finding = redefinedToolsFinding(changes);
    for (const c of changes) if (!finding.tools.includes(c.tool) || finding.confidence < ACT_CONFIDENCE) memory.toolPins.set(c.tool, c.after);
    findings.push(finding);
  }

  const enforcing = policy.mode === 'enforce' && !shadow;
  const traced: TracedAnomalyFinding[] = [];
  const acting: Array<AnomalyFinding | LoopFinding> = [];
  let response: AnomalyResponse | null = null;
  for (const f of findings) {
    let count = memory.counts.get(f.detector) ?? 0;
    if (f.confidence >= policy.enforcement.minConfidence) memory.counts.set(f.detector, ++count);
    const action = enforcing ? responseTo(policy, f, count) : 'off';
    const { loopKeys: _secretBearing, ...shown } = f as LoopFinding;
    traced.push({ ...shown, action: action === 'off' ? 'report' : action, sessionCount: count });
    if (action === 'off') continue;
    acting.push(f);
    if (response === null || ACTION_RANK[action] > ACTION_RANK[response]) response = action;
  }
  return { mode: policy.mode, findings: traced, response, acting, card: acting.length > 0 && response !== 'kill' ? renderCard(acting) : null };
}
