import { z } from 'zod';
import { PII_DETECTOR_IDS, type WorkspaceSettings } from '../../config/settings.js';
import { holdKey, HoldLedgerError, type HoldLedger } from '../../policy/holds.js';
import { DlpScanner } from '../../policy/dlp/scanner.js';
import { mcpPolicyFrom } from '../../policy/mcp.js';
import { toolCallNotice } from '../../policy/notice.js';
import { effectivePiiActions } from '../../policy/policy-config.js';
import type { ToolCall, ToolCallContext, ToolVerdict } from '../../policy/tool-judge.js';
import { isReadOnlyTool, judgeToolCalls, type ArgumentsDlp } from '../../policy/tool-verdict.js';
import type { Principal } from '../auth/principal.js';
import { newId } from '../ids.js';
import { approvedBypasses, recordHold } from '../holds/store.js';
import { registryViews } from '../mcp-registry/store.js';
import { recordIncident } from '../incidents/store.js';
import type { Reply } from '../router.js';
import type { Services } from '../services.js';

/** Seed 002: a command over 256 KiB, or arguments whose compact JSON is over 1 MiB, is refused before any tier. */
export const COMMAND_SIZE_LIMIT = 256 * 1024;
export const ARGUMENTS_SIZE_LIMIT = 1024 * 1024;

const text = (max: number) => z.string().min(1).max(max);

/**
 * POST /hook-gate. Extra fields are allowed (gates of other versions send more); the fields read
 * are checked. `toolInput` is the tool's input: an object (its JSON arguments) or a string (the
 * raw input of a tool that takes text).
 */
export const hookGateBody = z.looseObject({
  toolName: text(256),
  toolInput: z.union([z.record(z.string(), z.unknown()), z.string()]).default({}),
  sessionId: z.string().max(256).nullish(),
  harnessType: z.string().max(64).nullish(),
  gateSource: z.string().max(64).nullish(),
  model: z.string().max(256).nullish(),
  traceId: z.string().max(128).nullish(),
});
export type HookGateBody = z.infer<typeof hookGateBody>;

let scanner: DlpScanner | undefined;
const dlpScanner = () => (scanner ??= new DlpScanner(PII_DETECTOR_IDS));

/** The workspace's DLP actions as a gateway with no local config of its own applies them. */
function argumentsDlp(settings: WorkspaceSettings): ArgumentsDlp {
  const actions = effectivePiiActions(settings.piiDetectors, undefined);
  const active = Object.fromEntries(Object.entries(actions).filter(([, a]) => a !== 'off')) as ArgumentsDlp['actions'];
  return { scan: (t) => dlpScanner().scan(t), actions: active };
}

/** The refusal a gate throws for an unreadable request (seed 002: HOOK_GATE, response code INVALID_REQUEST), whatever failClosed says. */
export function invalidHookGateRequest(message: string, details?: unknown): Reply {
  return {
    status: 400,
    body: {
      error: { code: 'INVALID_REQUEST', message, ...(details === undefined ? {} : { details }) },
      verdict: 'block',
      code: 'HOOK_GATE',
      reason: `the hook gate could not read the request: ${message}`,
      message: `[Svc Governance] BLOCKED: HOOK_GATE: the hook gate could not read the request (${message}).`,
    },
  };
}

/** Holds kept by this control plane directly: the same state machine a gateway reaches over HTTP. */
function localLedger(services: Services, principal: Principal, body: HookGateBody, now: Date): HoldLedger {
  return {
    async approval(key) {
      const found = await approvedBypasses(services.db, now, principal.workspaceId, key);
      const first = found.bypasses[0];
      return first === undefined ? null : { holdId: first.holdId, rule: first.rule, expiresAt: first.expiresAt };
    },
    async record(request) {
      try {
        const args = request.call.input === 'json' ? JSON.parse(request.call.arguments) : request.call.arguments;
        const { hold } = await services.db.transaction((tx) =>
          recordHold(
            tx,
            now,
            { workspaceId: principal.workspaceId, requesterMemberId: principal.memberId, reporterMemberId: principal.memberId },
            {
              tool: request.key.tool,
              rule: request.key.rule,
              source: request.source,
              reason: request.reason,
              arguments: args,
              sessionId: body.sessionId ?? null,
              harness: body.harnessType ?? null,
              traceId: body.traceId ?? null,
              model: body.model ?? null,
              origin: 'hook_gate',
            },
          ),
        );
        return { holdId: hold.id, incidentId: hold.incidentId };
      } catch (err) {
        services.logger.error({ err }, 'hook gate could not record a hold');
        throw new HoldLedgerError('the control plane could not record it');
      }
    },
  };
}

/**
 * The hook gate (seed 002, tier 6): the tool-call verdict with the workspace's rules (DLP
 * patterns over the arguments, the MCP lists, its WASM and decide rules, holds). Read-only tools
 * are let through unasked. A refusal opens or joins an incident and names it; a hold names its
 * hold. A check that could not complete answers 503 GOVERNANCE_UNAVAILABLE (the gate's failClosed
 * decides), except in an observe-only workspace (ff_shadow_enforcement), which gets an allow
 * marked degraded; there every refusal is an allow carrying `wouldBlock`.
 */
export async function evaluateHookGate(services: Services, principal: Principal, body: HookGateBody): Promise<Reply> {
  const now = new Date(services.clock());
  const gateId = newId.hookEvent();
  if (isReadOnlyTool(body.toolName)) return { body: { verdict: 'allow', code: null, reason: null, readOnly: true, gateId } };
  const argumentsText = typeof body.toolInput === 'string' ? body.toolInput : JSON.stringify(body.toolInput);
  const command = typeof body.toolInput === 'object' && typeof body.toolInput.command === 'string' ? body.toolInput.command : null;
  if (Buffer.byteLength(argumentsText) > ARGUMENTS_SIZE_LIMIT || (command !== null && Buffer.byteLength(command) > COMMAND_SIZE_LIMIT)) {
    const reason = command !== null && Buffer.byteLength(command) > COMMAND_SIZE_LIMIT ? 'the command is over 256 KiB' : 'the arguments are over 1 MiB of JSON';
    return { body: { verdict: 'block', code: 'COMMAND_TOO_LARGE', reason, rule: 'COMMAND_TOO_LARGE', source: null, message: `[Svc Governance] BLOCKED: COMMAND_TOO_LARGE: ${reason}.`, gateId } };
  }
  const [row] = await services.db.query<{ settings: WorkspaceSettings }>('SELECT settings FROM workspaces WHERE id = $1', [principal.workspaceId]);
  const settings = row?.settings ?? {};
  const shadow = settings.featureFlags?.ff_shadow_enforcement === true;
  const judges = await services.hookGateRules.judges(services.db, principal.workspaceId);
  const call: ToolCall = { id: gateId, name: body.toolName, arguments: argumentsText, input: typeof body.toolInput === 'string' ? 'text' : 'json' };
  const ctx: ToolCallContext = {
    workspace: principal.workspaceId,
    model: body.model ?? '',
    harness: body.harnessType ?? null,
    session: body.sessionId ?? null,
    traceId: body.traceId ?? gateId,
  };
  const [verdict] = await judgeToolCalls([call], ctx, {
    judges,
    mcp: mcpPolicyFrom(settings, await registryViews(services.db, principal.workspaceId)),
    dlp: argumentsDlp(settings),
    ...(shadow ? {} : { holds: localLedger(services, principal, body, now) }),
  });
  const v = verdict!;
  const flagged = v.flagged !== undefined && v.flagged.length > 0 ? { flagged: v.flagged } : {};
  if (v.action === 'allow') {
    return { body: { verdict: 'allow', code: null, reason: null, gateId, ...flagged, ...(v.bypass ? { bypass: v.bypass } : {}), ...(v.unjudged ? { unjudged: v.unjudged } : {}) } };
  }
  const code = v.action === 'hold' ? 'HELD' : (v.code ?? 'HOOK_GATE');
  if (shadow) {
    return { body: { verdict: 'allow', code: null, reason: null, gateId, degraded: v.action === 'block' && v.unavailable === true, wouldBlock: { verdict: v.action, code, rule: v.rule, source: v.source, reason: v.reason }, ...flagged } };
  }
  if (v.action === 'block' && v.unavailable === true) {
    return {
      status: 503,
      body: { error: { code: 'GOVERNANCE_UNAVAILABLE', message: `a check could not complete: ${v.reason}` }, verdict: 'block', code: 'HOOK_GATE', rule: v.rule, source: v.source, reason: v.reason, gateId },
    };
  }
  if (v.action === 'hold') {
    const hold = v.hold;
    const holdId = hold?.holdId ?? null;
    return {
      body: {
        verdict: 'hold',
        code,
        rule: v.rule,
        source: v.source,
        reason: v.reason,
        holdId,
        incidentId: hold !== undefined && hold.holdId !== null ? hold.incidentId : null,
        argumentsSha256: holdKey(call, v.rule).argumentsSha256,
        message: toolCallNotice(call, v),
        gateId,
        ...flagged,
      },
    };
  }
  const incident = await services.db.transaction((tx) =>
    recordIncident(tx, now, {
      workspaceId: principal.workspaceId,
      sessionId: body.sessionId ?? null,
      rule: v.rule,
      kind: 'block',
      tool: body.toolName,
      harness: body.harnessType ?? null,
      code,
      reason: v.reason,
      ref: { tool: body.toolName, ...(body.traceId ? { traceId: body.traceId } : {}) },
    }),
  );
  const blocked: Extract<ToolVerdict, { action: 'block' }> = { ...v, code, incidentId: incident.id };
  return {
    body: { verdict: 'block', code, rule: v.rule, source: v.source, reason: v.reason, incidentId: incident.id, message: toolCallNotice(call, blocked), gateId, ...flagged },
  };
}
