import { createHash } from 'node:crypto';
import { ControlPlaneHttpError, type ControlPlaneApi } from '../config/control-plane-api.js';
import type { Logger } from '../lib/logger.js';
import { HoldLedgerError, type HoldKey, type HoldLedger, type HoldRequest } from '../policy/holds.js';
import type { ApprovedBypass, ToolCall, ToolCallContext } from '../policy/tool-judge.js';
import type { Store } from '../state/index.js';
import { killRule } from '../lib/kill-rule.js';
import type { TraceRecord } from '../traces/trace.js';
import type { KillIncident } from './exchange.js';
import type { SubstitutionReport, SubstitutionReporter } from './tool-calls-review.js';

/** Seed 002: arguments whose compact JSON is over 1 MiB are not taken (ARGUMENTS_SIZE_LIMIT). */
const MAX_ARGUMENT_BYTES = 1024 * 1024;

/** The caller's context within the control plane's bounds (a session header can be anything). */
const bounded = (ctx: ToolCallContext) => ({
  sessionId: ctx.session?.slice(0, 256) || null,
  harness: ctx.harness?.slice(0, 64) || null,
  model: ctx.model.slice(0, 256) || null,
});

export interface HoldsClientOptions {
  /** The control plane, with the key the gateway syncs with. */
  readonly api: ControlPlaneApi;
  /** Where approvals are cached: shared by every proxy of the workspace when it is a RedisStore. */
  readonly store: Store;
  readonly gatewayId: string;
  readonly logger: Logger;
  readonly clock?: () => number;
  /** Longest an approval is cached (never past its expiry). Default 30 s. */
  readonly approvalCacheMs?: number;
  /** How long a hold, lookup or report may wait for the control plane. Default 3 s. */
  readonly timeoutMs?: number;
  /** How long a session's refusals by one rule reuse the incident the first was recorded under. Default 30 s. */
  readonly killIncidentReuseMs?: number;
}

/** At most this many (session, rule) groups remember their incident; the oldest is forgotten first. */
const MAX_REMEMBERED_KILLS = 10_000;

interface CachedApproval {
  holdId: string;
  rule: string;
  expiresAt: string;
}

/** What a gateway knows about the caller and the workspace's hold settings when it asks. */
export interface LedgerScope {
  /** reviewHoldBypassEnabled as the gateway's config has it: off, no approval is looked up. */
  readonly bypassEnabled: boolean;
  /** SHA-256 of the vk_ key the agent called with, so the hold's requester is that key's member. */
  readonly requesterKeySha256?: string | undefined;
}

/** What the request path asks of holds: HoldsClient, or from another I/O thread the way to it. */
export type HoldsService = Pick<HoldsClient, 'ledger' | 'report' | 'recordKill'>;

/**
 * A gateway's side of holds: the HoldLedger the tool-call verdict uses, over the control plane's
 * REST API with the gateway's own key. An approval found is cached in the Store (so every proxy
 * of the workspace sharing one Redis honours it without asking again) until it expires or for at
 * most 30 s, whichever is sooner; the absence of one is never cached, so an approval counts from
 * the moment it is given. The approval used is reported as a `hold_approved_bypass_used` hook
 * event; refused calls are reported as substitutions (a block waits for its incident id), and
 * a refused request (KILL) is recorded before it is answered so the refusal names its incident.
 */
export class HoldsClient {
  private readonly cacheMs: number;
  private readonly timeoutMs: number;
  private readonly killReuseMs: number;
  /** (session, rule) → the incident its last recorded KILL joined, so a refusal storm asks once. */
  private readonly kills = new Map<string, { incident: Promise<string | null>; until: number }>();

  constructor(private readonly options: HoldsClientOptions) {
    this.cacheMs = options.approvalCacheMs ?? 30_000;
    this.timeoutMs = options.timeoutMs ?? 3000;
    this.killReuseMs = options.killIncidentReuseMs ?? 30_000;
  }

  private now(): number {
    return this.options.clock?.() ?? Date.now();
  }

  ledger(scope: LedgerScope): HoldLedger {
    return {
      approval: (key, ctx) => (scope.bypassEnabled ? this.approval(key, ctx) : Promise.resolve(null)),
      record: (request) => this.record(request, scope),
      bypassUsed: (bypass, call, ctx) => this.bypassUsed(bypass, call, ctx),
    };
  }

  readonly report: SubstitutionReporter = async (reports, ctx) => {
    try {
      const answer = await this.options.api.json<{ substitutions: Array<{ callId: string; incidentId: string | null }> }>(
        'POST',
        '/decisions/substitutions',
        {
          gatewayId: this.options.gatewayId,
          traceId: ctx.traceId,
          ...bounded(ctx),
          substitutions: reports.map((r: SubstitutionReport) => ({ ...r, reason: r.reason.slice(0, 2000) })),
        },
        { timeoutMs: this.timeoutMs },
      );
      const byCall = new Map(answer.substitutions.map((s) => [s.callId, s.incidentId]));
      return reports.map((r) => byCall.get(r.callId) ?? null);
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message, traceId: ctx.traceId }, 'could not report substituted tool calls; the trace carries them');
      return reports.map(() => null);
    }
  };

  /**
   * Records a KILL with the control plane and answers its incident. The first refusal of a
   * session by a rule asks (and is `recorded`: its trace is not counted again); refusals of the
   * same group within the reuse window, or while that answer is pending, name the same incident
   * without asking, and their traces count them. Null when the control plane cannot say.
   */
  async recordKill(trace: TraceRecord): Promise<KillIncident | null> {
    const group = `${trace.session ?? ''}\u0000${killRule(trace)}`;
    const now = this.now();
    const known = this.kills.get(group);
    if (known !== undefined && known.until > now) {
      const incidentId = await known.incident;
      return incidentId === null ? null : { incidentId, recorded: false };
    }
    const incident = this.postKill(trace);
    this.kills.delete(group);
    if (this.kills.size >= MAX_REMEMBERED_KILLS) this.kills.delete(this.kills.keys().next().value!);
    this.kills.set(group, { incident, until: now + this.killReuseMs });
    const incidentId = await incident;
    // A failed answer is not remembered: the next refusal asks again.
    if (incidentId === null && this.kills.get(group)?.incident === incident) this.kills.delete(group);
    return incidentId === null ? null : { incidentId, recorded: true };
  }

  private async postKill(trace: TraceRecord): Promise<string | null> {
    try {
      const answer = await this.options.api.json<{ incidentId: string | null }>('POST', '/incidents/kills', { gatewayId: this.options.gatewayId, trace: { ...trace, session: trace.session?.slice(0, 256) ?? null } }, { timeoutMs: this.timeoutMs });
      return answer.incidentId;
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message, traceId: trace.id }, 'could not record a refusal with the control plane; its trace will');
      return null;
    }
  }

  private cacheKey(key: HoldKey): string {
    return 'hold-approval:' + createHash('sha256').update(`${key.rule}\u0000${key.tool}\u0000${key.argumentsSha256}`).digest('hex');
  }

  private async approval(key: HoldKey, ctx: ToolCallContext): Promise<ApprovedBypass | null> {
    const cacheKey = this.cacheKey(key);
    const cached = await this.options.store.cacheGet(ctx.workspace, cacheKey);
    if (cached !== undefined) {
      try {
        const hit = JSON.parse(cached.toString('utf8')) as CachedApproval;
        if (Date.parse(hit.expiresAt) > this.now()) return hit;
      } catch {
        // An unreadable entry is a miss.
      }
    }
    const query = new URLSearchParams({ rule: key.rule, tool: key.tool, argumentsSha256: key.argumentsSha256 });
    let found: { bypasses: CachedApproval[] };
    try {
      found = await this.options.api.json('GET', `/decisions/approved-bypasses?${query}`, undefined, { timeoutMs: this.timeoutMs });
    } catch (err) {
      throw new HoldLedgerError(describe(err));
    }
    const first = found.bypasses.find((b) => Date.parse(b.expiresAt) > this.now());
    if (first === undefined) return null;
    const approval: CachedApproval = { holdId: first.holdId, rule: first.rule, expiresAt: first.expiresAt };
    const ttl = Math.min(this.cacheMs, Date.parse(first.expiresAt) - this.now());
    if (ttl > 0) await this.options.store.cacheSet(ctx.workspace, cacheKey, Buffer.from(JSON.stringify(approval)), ttl);
    return approval;
  }

  private async record(request: HoldRequest, scope: LedgerScope): Promise<{ holdId: string; incidentId: string | null }> {
    const { call, key, ctx } = request;
    if (Buffer.byteLength(call.arguments) > MAX_ARGUMENT_BYTES) throw new HoldLedgerError('its arguments are over 1 MiB');
    let args: unknown = call.arguments;
    if (call.input === 'json') {
      try {
        args = JSON.parse(call.arguments);
      } catch {
        args = call.arguments;
      }
    }
    try {
      const hold = await this.options.api.json<{ id: string; incidentId: string | null }>(
        'POST',
        '/decisions',
        {
          tool: key.tool,
          rule: key.rule,
          source: request.source,
          reason: request.reason.slice(0, 2000),
          arguments: args,
          argumentsSha256: key.argumentsSha256,
          ...bounded(ctx),
          traceId: ctx.traceId,
          gatewayId: this.options.gatewayId,
          origin: 'proxy',
          ...(scope.requesterKeySha256 === undefined ? {} : { requesterKeySha256: scope.requesterKeySha256 }),
        },
        { timeoutMs: this.timeoutMs },
      );
      return { holdId: hold.id, incidentId: hold.incidentId };
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message, traceId: ctx.traceId, rule: key.rule }, 'could not record a hold with the control plane');
      throw new HoldLedgerError(describe(err));
    }
  }

  private bypassUsed(bypass: ApprovedBypass, call: ToolCall, ctx: ToolCallContext): void {
    const event = {
      eventId: `${ctx.traceId}:${call.id}:hold_approved_bypass_used`,
      type: 'hold_approved_bypass_used',
      at: new Date(this.now()).toISOString(),
      gateSource: 'proxy',
      harness: bounded(ctx).harness,
      sessionId: bounded(ctx).sessionId,
      toolName: call.name.slice(0, 256),
      rule: bypass.rule,
      holdId: bypass.holdId,
      traceId: ctx.traceId,
      gatewayId: this.options.gatewayId,
    };
    this.options.api
      .call('POST', '/hook-events', { events: [event] }, { timeoutMs: this.timeoutMs })
      .catch((err: unknown) => this.options.logger.warn({ err: (err as Error).message, traceId: ctx.traceId }, 'could not report hold_approved_bypass_used; the trace records it'));
  }
}

/** Why the control plane could not say, in the words the agent reads after "no hold id could be recorded:". */
function describe(err: unknown): string {
  if (err instanceof ControlPlaneHttpError) return `the control plane refused it (${err.status})`;
  return 'the control plane could not be reached';
}
