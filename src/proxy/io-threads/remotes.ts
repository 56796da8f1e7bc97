import { asBuffer } from '../../lib/bytes.js';
import { RemoteCallError, type RpcChannel } from '../../lib/rpc.js';
import type { AnomalyPolicy } from '../../policy/anomaly/anomaly-policy.js';
import type { AnomalyDecision, SessionReport } from '../../policy/anomaly/guard.js';
import type { SessionJudge } from '../../policy/anomaly/sessions.js';
import { HoldLedgerError, type HoldLedger } from '../../policy/holds.js';
import type { BudgetSnapshot, CallCountRequest, CallCountResult, ReserveRequest, ReserveResult, SettleRequest, Store, StoreHealth } from '../../state/index.js';
import type { TraceOutlet } from '../../traces/sink.js';
import type { TraceRecord } from '../../traces/trace.js';
import type { KillIncident } from '../exchange.js';
import type { HoldsService, LedgerScope } from '../holds-client.js';
import type { ClusterView } from '../server.js';
import type { SubstitutionReporter } from '../tool-calls-review.js';
import type { HubApi } from './api.js';

type Hub = RpcChannel<HubApi>;


/** The main thread's store, from another I/O thread. */
export class RemoteStore implements Store {
  constructor(
    private readonly hub: Hub,
    private readonly kind: StoreHealth['kind'],
  ) {}

  countCall(req: CallCountRequest): Promise<CallCountResult> {
    return this.hub.call('countCall', req);
  }

  reserve(req: ReserveRequest): Promise<ReserveResult> {
    return this.hub.call('reserve', req);
  }

  /** Sent, not awaited: a settlement never fails (the store queues it), and it arrives before anything this thread sends later. */
  settle(req: SettleRequest): Promise<void> {
    this.hub.notify('settle', req);
    return Promise.resolve();
  }

  release(req: Omit<SettleRequest, 'actualUsd'>): Promise<void> {
    this.hub.notify('release', req);
    return Promise.resolve();
  }

  snapshot(workspace: string, now?: number): Promise<BudgetSnapshot> {
    return this.hub.call('snapshot', workspace, now);
  }

  async cacheGet(workspace: string, key: string): Promise<Buffer | undefined> {
    const bytes = await this.hub.call('cacheGet', workspace, key);
    return bytes === undefined ? undefined : asBuffer(bytes);
  }

  /** Sent at once: the answer is offered before it is sent, so another thread asked next finds it. */
  cacheSet(workspace: string, key: string, value: Buffer, ttlMs: number): Promise<void> {
    const stored = this.hub.call('cacheSet', workspace, key, value, ttlMs);
    this.hub.flush();
    return stored;
  }

  /** The main thread reports the store's health (`/health`, `/metrics`); this thread only knows its kind. */
  health(): StoreHealth {
    return { kind: this.kind, connected: true };
  }

  /** The store is the main thread's to close. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Sends settled requests' traces to the main thread's sink (the channel batches them). */
export class RemoteTraces implements TraceOutlet {
  readonly droppedCount = 0;

  constructor(private readonly hub: Hub) {}

  record(trace: TraceRecord): void {
    this.hub.notify('trace', trace);
  }

  close(): Promise<void> {
    this.hub.flush();
    return Promise.resolve();
  }
}

/** A HoldLedgerError on the main thread is one here too: the verdict treats it as "cannot tell". */
function ledgerError(err: unknown): never {
  if (err instanceof RemoteCallError && err.remoteName === HoldLedgerError.name) throw new HoldLedgerError(err.remoteMessage);
  throw err;
}

/** The main thread's holds client, from another I/O thread. */
export class RemoteHolds implements HoldsService {
  constructor(private readonly hub: Hub) {}

  ledger(scope: LedgerScope): HoldLedger {
    return {
      approval: (key, ctx) => this.hub.call('holdApproval', scope, key, ctx).catch(ledgerError),
      record: (request) => this.hub.call('holdRecord', scope, request).catch(ledgerError),
      bypassUsed: (bypass, call, ctx) => this.hub.notify('holdBypassUsed', scope, bypass, call, ctx),
    };
  }

  readonly report: SubstitutionReporter = (reports, ctx) => this.hub.call('holdReport', [...reports], ctx);

  recordKill(trace: TraceRecord): Promise<KillIncident | null> {
    return this.hub.call('recordKill', trace);
  }
}

/** Session memories live on the main thread, so a session is one wherever its connections land. */
export class RemoteSessionJudge implements SessionJudge {
  constructor(private readonly hub: Hub) {}

  decide(key: string, policy: AnomalyPolicy, report: SessionReport, shadow: boolean): Promise<AnomalyDecision> {
    return this.hub.call('decideSession', key, policy, report, shadow);
  }
}

/** `/health` and `/metrics` of every thread, answered by the main thread. */
export class RemoteClusterView implements ClusterView {
  constructor(private readonly hub: Hub) {}

  health(): Promise<Record<string, unknown>> {
    return this.hub.call('health');
  }

  metrics(): Promise<{ contentType: string; body: string }> {
    return this.hub.call('metrics');
  }
}
