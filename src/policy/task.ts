import { plainReport } from './anomaly/detect.js';
import { inspectBody, type Inspection } from './inspect.js';
import type { PolicyConfig } from './policy-config.js';

/** One unit of inspection work for a worker. */
export interface InspectionTask {
  readonly policy: PolicyConfig;
  /** The body's JSON text, exactly as it would be sent on. */
  readonly body: string;
}

export interface InspectionResult extends Inspection {
  /** The body to send on when the verdict is `modified`. */
  readonly body: string | null;
}

/** Inspects an already-parsed body (rewriting it in place when redacting). */
export function inspectParsed(policy: PolicyConfig, parsed: unknown): InspectionResult {
  const { verdict, findings, blockedBy, shadow, anomaly } = inspectBody(policy, parsed);
  // Written out, not `{ ...inspection, body }` (bench/README.md, "Garbage collection").
  return { verdict, findings, blockedBy, shadow, anomaly, body: verdict === 'modified' ? JSON.stringify(parsed) : null };
}

/** In a worker: the result goes back to the main thread as plain data. */
export function runInspection(task: InspectionTask): InspectionResult {
  const { verdict, findings, blockedBy, shadow, anomaly, body } = inspectParsed(task.policy, JSON.parse(task.body));
  return { verdict, findings, blockedBy, shadow, anomaly: plainReport(anomaly), body };
}
