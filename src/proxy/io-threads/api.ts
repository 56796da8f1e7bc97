import type { RuntimeConfig } from '../../config/runtime.js';
import type { AnomalyPolicy } from '../../policy/anomaly/anomaly-policy.js';
import type { AnomalyDecision, SessionReport } from '../../policy/anomaly/guard.js';
import type { HoldKey, HoldRequest } from '../../policy/holds.js';
import type { ApprovedBypass, ToolCall, ToolCallContext } from '../../policy/tool-judge.js';
import type { Store } from '../../state/index.js';
import type { TraceRecord } from '../../traces/trace.js';
import type { KillIncident } from '../exchange.js';
import type { LedgerScope } from '../holds-client.js';
import type { MetricsSnapshot } from '../metrics.js';
import type { ThreadState } from '../server.js';
import type { SubstitutionReport } from '../tool-calls-review.js';

/**
 * What the main thread answers for the proxy's other I/O threads: the state every thread shares
 * (budgets, caps and the cache in the store, session memories, holds, the trace sink) and the
 * views over all threads.
 */
export interface HubApi {
  [method: string]: (...args: never[]) => unknown;
  countCall: Store['countCall'];
  reserve: Store['reserve'];
  /** Notifications: a settlement never fails, the store queues it. */
  settle: Store['settle'];
  release: Store['release'];
  snapshot: Store['snapshot'];
  /** Bytes cross threads as a Uint8Array, not a Buffer. */
  cacheGet(workspace: string, key: string): Promise<Uint8Array | undefined>;
  cacheSet(workspace: string, key: string, value: Uint8Array, ttlMs: number): Promise<void>;
  /** A settled request's trace (a notification). */
  trace(trace: TraceRecord): void;
  /** The thread's requests in flight (a notification, sent when the count changed). */
  inflight(thread: number, count: number): void;
  decideSession(key: string, policy: AnomalyPolicy, report: SessionReport, shadow: boolean): AnomalyDecision | Promise<AnomalyDecision>;
  holdApproval(scope: LedgerScope, key: HoldKey, ctx: ToolCallContext): Promise<ApprovedBypass | null>;
  holdRecord(scope: LedgerScope, request: HoldRequest): Promise<{ holdId: string; incidentId: string | null }>;
  holdBypassUsed(scope: LedgerScope, bypass: ApprovedBypass, call: ToolCall, ctx: ToolCallContext): void;
  holdReport(reports: SubstitutionReport[], ctx: ToolCallContext): Promise<ReadonlyArray<string | null>>;
  recordKill(trace: TraceRecord): Promise<KillIncident | null>;
  health(): Promise<Record<string, unknown>>;
  metrics(): Promise<{ contentType: string; body: string }>;
  /** The thread listens (error null) or could not start (a notification). */
  ready(thread: number, error: string | null): void;
}

/** What an I/O thread answers for the main thread. */
export interface ThreadApi {
  [method: string]: (...args: never[]) => unknown;
  setConfig(config: RuntimeConfig): Promise<void>;
  state(): ThreadState;
  metrics(): Promise<MetricsSnapshot>;
  /** Stops accepting and drains (at most `drainMs`); the thread exits after. */
  close(drainMs: number): Promise<void>;
}

/** What an I/O thread starts with. */
export interface ThreadData {
  readonly index: number;
  readonly host: string;
  readonly port: number;
  readonly config: RuntimeConfig;
  /** Inspection worker threads this I/O thread may start. */
  readonly inspectionThreads: number;
  /** Where decide rules' SOPs are read. */
  readonly decideRoot: string;
  /** Whether holds are recorded with a control plane. */
  readonly holds: boolean;
  /** The store's kind, for what /health of this thread alone would say. */
  readonly storeKind: 'memory' | 'redis';
}
