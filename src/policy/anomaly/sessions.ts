import type { AnomalyDetectorId } from './finding.js';
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
