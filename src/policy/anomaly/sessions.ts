import type { AnomalyPolicy } from './anomaly-policy.js';
import type { AnomalyDetectorId } from './finding.js';
import { decideAnomaly, type AnomalyDecision, type SessionReport } from './guard.js';
import type { ToolPin } from './poisoning.js';

/** What the gateway remembers of one agent session between its requests. */
export interface SessionMemory {
  /** Each offered tool's pin: its definition as last accepted. */
  readonly toolPins: Map<string, ToolPin>;
  /** Findings per detector at or above anomaly_enforcement.minConfidence, over the session. */
  readonly counts: Map<AnomalyDetectorId, number>;
}

/** Sessions remembered per proxy process; the least recently seen is forgotten first. */
export const DEFAULT_MAX_SESSIONS = 10_000;

/**
 * A bounded LRU of session memories keyed by workspace and session, on the main thread: the
 * detectors in the workers are stateless. A session is its `x-session-id`, else the fingerprint
 * of its first turns.
 */
export class AnomalySessions {
  private readonly sessions = new Map<string, SessionMemory>();

  constructor(private readonly max = DEFAULT_MAX_SESSIONS) {}

  /** `fingerprint` is read only when no header names the session. */
  static key(workspace: string, sessionHeader: string | null, report: { readonly fingerprint: string }): string {
    return `${workspace}\u0000${sessionHeader ?? `fp:${report.fingerprint}`}`;
  }

  get(key: string): SessionMemory {
    let memory = this.sessions.get(key);
    if (memory !== undefined) {
      this.sessions.delete(key);
    } else {
      memory = { toolPins: new Map(), counts: new Map() };
      if (this.sessions.size >= this.max) this.sessions.delete(this.sessions.keys().next().value!);
    }
    this.sessions.set(key, memory);
    return memory;
  }

  get size(): number {
    return this.sessions.size;
  }
}

/**
 * Judges a request's anomaly report against its session's memory. The proxy's main thread holds
 * the memories; its other I/O threads ask it, so a session is judged as one wherever its
 * connections land.
 */
export interface SessionJudge {
  decide(key: string, policy: AnomalyPolicy, report: SessionReport, shadow: boolean): AnomalyDecision | Promise<AnomalyDecision>;
}

/** The memories of this thread's sessions. */
export class LocalSessionJudge implements SessionJudge {
  private readonly sessions: AnomalySessions;

  constructor(max = DEFAULT_MAX_SESSIONS) {
    this.sessions = new AnomalySessions(max);
  }

  decide(key: string, policy: AnomalyPolicy, report: SessionReport, shadow: boolean): AnomalyDecision {
    return decideAnomaly(policy, report, this.sessions.get(key), shadow);
  }
}
