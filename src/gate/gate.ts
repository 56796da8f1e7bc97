import { argumentsSha256, canonicalJson } from '../lib/canonical-json.js';
import { z } from 'zod';
import { mcpRefusal, parseMcpToolName } from '../policy/mcp.js';
import { compileSopRules, firstSopMatch, sopRuleSchema, type CompiledSopRule } from '../policy/sop-rules.js';
import { svcHome } from '../lib/paths.js';
import { join } from 'node:path';
import type { GateClient, HookEventInput } from './client.js';
import { chaosFromEnv, type ChaosRun } from './chaos.js';
import { commandOf, isDeploy } from './commands.js';
import { checkCommand, loadAllowlist } from './images.js';
import { ARGUMENTS_SIZE_LIMIT, COMMAND_SIZE_LIMIT, READ_ONLY_TOOLS, SvcGateEscalation, SvcGateHold, SvcGateRefusal } from './refusals.js';
import { firstMatch, loadSnapshot, type GateRule, type Snapshot } from './snapshot.js';

/** Seed 002 "Gate configuration". */
export interface GateConfig {
  /** Base for relative manifest and allowlist paths. */
  readonly repoRoot?: string;
  /** Compared with the workspace the snapshot was compiled for (empty: not compared). */
  readonly workspaceId?: string;
  readonly allowlistPath?: string;
  /** false turns guard into a no-op. */
  readonly enforce?: boolean;
  readonly useHookGate?: boolean;
  readonly useSopRules?: boolean;
  /** Where the policy snapshot is read from (default `$SVC_HOME/hooks/policy-snapshot.rules`). */
  readonly snapshotPath?: string;
  /** The environment read for SVC_GUARD_DISABLE (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** Called with each decision's events, whether or not there is a client to report them to (the hook gate reads its warnings). */
  readonly onEvents?: (events: readonly HookEventInput[]) => void;
}

/** The hold key an approval is matched on: the rule, the tool and the SHA-256 of its arguments with keys sorted. */
export function holdKey(toolName: string, toolInput: unknown, rule: string): { rule: string; tool: string; argumentsSha256: string } {
  return { rule, tool: toolName, argumentsSha256: argumentsSha256(toolInput) };
}

/** The text after `HELD:`. */
export function holdMessage(toolName: string, rule: string, reason: string, holdId: string | null): string {
  const base = `the ${toolName} tool call awaits a person's approval (rule ${rule}: ${reason})`;
  return holdId === null ? `${base}; no hold id could be recorded. It was not run; do not retry it.` : `${base}. It was not run; do not retry it until a person has approved hold ${holdId}.`;
}

export { canonicalJson };

/**
 * The pre-execution gate (seed 002 "Gate evaluation"): `guard(toolName, toolInput)` resolves when
 * the call may run and throws a refusal otherwise. Tiers, in order, stopping at the first refusal:
 * SSO group policy, the snapshot's block and hold rules, the MCP server tier, SOP rules (needs a
 * client), image integrity on deploy commands, the hook gate (needs a client). Size limits come
 * before any tier; read-only tools skip tiers 4 and 6. Every decision is reported to the control
 * plane when there is a client, without waiting for it.
 */
export class Gate {
  private snapshot: Promise<Snapshot> | null = null;
  private sop: Promise<readonly CompiledSopRule[]> | null = null;
  /** This process's chaos run (SVC_CHAOS_PLAN), read on the first call; null: none. */
  private chaos: ChaosRun | null | undefined;
  private healthReported = false;
  private readonly repoRoot: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    readonly config: GateConfig = {},
    readonly client: GateClient | null = null,
  ) {
    this.repoRoot = config.repoRoot ?? '.';
    this.env = config.env ?? process.env;
  }

  async guard(toolName: string, toolInput: unknown): Promise<void> {
    if (this.config.enforce === false) return;
    const chaos = (this.chaos ??= chaosFromEnv(this.env));
    if (chaos !== null && !chaos.ok) throw new SvcGateRefusal('CHAOS_FAULT', `${chaos.reason}; every call is refused until the chaos run is fixed.`, 'chaos_plan');
    if (chaos?.ok === true && !chaos.chaos.plan.enforce) return;
    const events: HookEventInput[] = [];
    try {
      await this.evaluate(toolName, toolInput, events);
      chaos?.chaos.record({ tool: toolName, input: toolInput }, { tool: toolName, verdict: 'allow', tier: null, rule: null, destructive: false, ruleHit: false });
      chaos?.chaos.inject(toolName, toolInput);
    } catch (err) {
      if (err instanceof SvcGateRefusal) {
        events.push({ type: err instanceof SvcGateHold ? 'tool_held' : 'tool_blocked', toolName, code: err.code, rule: err.rule, reason: err.reason, holdId: err instanceof SvcGateHold ? err.holdId : null, incidentId: err.incidentId });
        if (chaos?.ok === true && !err.rule.startsWith('chaos:')) {
          const destructive = err.code === 'SNAPSHOT' && err.rule.startsWith('destructive:');
          chaos.chaos.record({ tool: toolName, input: toolInput }, { tool: toolName, verdict: err instanceof SvcGateHold ? 'hold' : 'block', tier: tierOf(err.code), rule: err.rule, destructive, ruleHit: true });
        }
      }
      throw err;
    } finally {
      if (this.client !== null) void this.client.report(events);
      this.config.onEvents?.(events);
    }
  }

  private async evaluate(toolName: string, toolInput: unknown, events: HookEventInput[]): Promise<void> {
    // Rule 1: sizes before any tier.
    const command = commandOf(toolInput);
    if (command !== null && Buffer.byteLength(command) > COMMAND_SIZE_LIMIT) throw new SvcGateRefusal('COMMAND_TOO_LARGE', 'the command is over 256 KiB.', 'COMMAND_TOO_LARGE');
    if (Buffer.byteLength(JSON.stringify(toolInput ?? {})) > ARGUMENTS_SIZE_LIMIT) throw new SvcGateRefusal('COMMAND_TOO_LARGE', 'the arguments are over 1 MiB of JSON.', 'COMMAND_TOO_LARGE');
    const readOnly = READ_ONLY_TOOLS.includes(toolName);
    const snapshot = await this.loadedSnapshot(events);

    // Tier 1: SSO group policy.
    const sso = snapshot.sso;
    if (sso !== null && sso.highRiskTools.includes(toolName) && sso.requiredGroups.length > 0) {
      if (sso.memberGroups === null) throw new SvcGateRefusal('SSO_GROUP', `${toolName} is a high-risk tool and the member's identity-provider groups are unknown.`, 'sso_group_policy');
      if (!sso.memberGroups.some((g) => sso.requiredGroups.includes(g))) {
        throw new SvcGateRefusal('SSO_GROUP', `${toolName} is a high-risk tool that only members of ${sso.requiredGroups.join(', ')} may run.`, 'sso_group_policy');
      }
    }

    // Tier 2: the snapshot's block and hold rules (SVC_GUARD_DISABLE=1 skips the destructive-command ones).
    const guardsDisabled = this.env.SVC_GUARD_DISABLE === '1';
    const rules = snapshot.rules.filter((r) => r.verb !== 'log' && !(guardsDisabled && r.destructive === true));
    if (guardsDisabled && snapshot.rules.some((r) => r.destructive === true && firstMatch([r], toolName, toolInput) !== undefined)) {
      events.push({ type: 'guards_disabled', toolName, reason: 'SVC_GUARD_DISABLE=1 skipped a destructive-command rule' });
    }
    const rule = firstMatch(rules, toolName, toolInput);
    // A log rule (a silent-logging workspace's fallback) would have blocked: the call is reported, not refused.
    const logged = firstMatch(snapshot.rules.filter((r) => r.verb === 'log'), toolName, toolInput);
    if (logged !== undefined) events.push({ type: 'tool_would_block', toolName, code: 'SNAPSHOT', rule: logged.id, reason: logged.reason });
    if (rule !== undefined && rule.verb === 'block') throw new SvcGateRefusal('SNAPSHOT', `the ${toolName} tool call was blocked by rule ${rule.id}: ${rule.reason}. It was not run.`, rule.id);
    if (rule !== undefined) await this.hold(rule, toolName, toolInput, events);

    // Tier 3: MCP servers.
    const mcp = parseMcpToolName(toolName);
    if (mcp !== null) {
      if (!snapshot.trusted) throw new SvcGateRefusal('POLICY_SNAPSHOT_UNVERIFIED', `no MCP server is admitted: the policy snapshot is not trusted (${snapshot.problem}).`, 'policy_snapshot');
      const refusal = snapshot.mcp === null ? null : mcpRefusal(toolName, snapshot.mcp);
      if (refusal !== null) {
        if (!snapshot.mcp!.observeOnly) throw new SvcGateRefusal(refusal.code, `${refusal.reason}.`, refusal.rule);
        events.push({ type: 'tool_would_block', toolName, code: refusal.code, rule: refusal.rule, reason: refusal.reason });
      }
    }

    // Tier 4: SOP rules with WHERE clauses (read-only tools skip it; fetched once per process; fails open).
    if (!readOnly && this.client !== null && this.config.useSopRules !== false) {
      const sop = firstSopMatch(await this.sopRules(events), toolName, toolInput);
      if (sop !== undefined && sop.action === 'block') throw new SvcGateRefusal('SOP_RULE', `the ${toolName} tool call was blocked by SOP rule ${sop.id}: ${sop.reason}. It was not run.`, sop.id);
      if (sop !== undefined) await this.hold({ verb: 'hold', id: sop.id, tools: sop.tools, reason: sop.reason }, toolName, toolInput, events);
    }

    // Tier 5: image integrity on deploy commands (fails closed).
    if (command !== null && isDeploy(command)) {
      const allowlist = await loadAllowlist(this.config.allowlistPath ?? '.svc/image-allowlist.json', this.repoRoot);
      const images = await checkCommand(command, this.repoRoot, allowlist);
      if (!images.ok) throw new SvcGateRefusal(images.code!, `${images.detail}.`, 'image_integrity');
    }

    // Tier 6: the hook gate (read-only tools skip it, and their allows are not reported).
    if (readOnly) return;
    if (this.client !== null && this.config.useHookGate !== false) await this.askHookGate(toolName, toolInput, events);
    events.push({ type: 'tool_allowed', toolName });
  }

  /** A hold rule matched: an approval of this exact call lets it through; otherwise it is held (with an id when the control plane records it). */
  private async hold(rule: GateRule, toolName: string, toolInput: unknown, events: HookEventInput[]): Promise<void> {
    const key = holdKey(toolName, toolInput, rule.id);
    if (this.client === null) throw new SvcGateHold(holdMessage(toolName, rule.id, rule.reason, null), rule.id, null);
    try {
      const approval = await this.client.approvedBypass(key);
      if (approval !== null) {
        events.push({ type: 'hold_approved_bypass_used', toolName, rule: rule.id, holdId: approval.holdId });
        return;
      }
    } catch {
      // Whether an approval exists cannot be told: held.
    }
    try {
      const recorded = await this.client.recordHold({ tool: toolName, rule: rule.id, reason: rule.reason, arguments: toolInput ?? {}, argumentsSha256: key.argumentsSha256 });
      throw new SvcGateHold(holdMessage(toolName, rule.id, rule.reason, recorded.holdId), rule.id, recorded.holdId, recorded.incidentId);
    } catch (err) {
      if (err instanceof SvcGateHold) throw err;
      throw new SvcGateHold(holdMessage(toolName, rule.id, rule.reason, null), rule.id, null);
    }
  }

  private async askHookGate(toolName: string, toolInput: unknown, events: HookEventInput[]): Promise<void> {
    const client = this.client!;
    const answer = await client.hookGate(toolName, toolInput);
    if (answer.kind === 'invalid') throw new SvcGateRefusal('HOOK_GATE', `the hook gate could not read the request (INVALID_REQUEST: ${answer.message}).`, 'hook_gate');
    if (answer.kind === 'unavailable' || answer.code === 'GOVERNANCE_UNAVAILABLE') {
      if (client.failClosed) {
        const why = answer.kind === 'unavailable' ? answer.reason : (answer.reason ?? 'a check could not complete');
        throw new SvcGateRefusal('HOOK_GATE', `GOVERNANCE_UNAVAILABLE: ${why}.`, 'hook_gate');
      }
      return;
    }
    if (answer.verdict === 'hold') {
      const reason = answer.reason ?? 'a hold rule matched';
      throw new SvcGateHold(reason, answer.rule ?? 'hook_gate', answer.holdId, answer.incidentId, answer.message ?? undefined);
    }
    if (answer.verdict === 'block' && answer.source === 'decide') {
      // A decide rule refused (DECIDE_REFUSED), or could not clear the call and no person can be asked (DECIDE_ESCALATED).
      const reason = answer.reason ?? 'a decide rule refused the call.';
      if (reason.startsWith('DECIDE_ESCALATED')) throw new SvcGateEscalation(reason, answer.rule ?? 'decide', answer.incidentId);
      if (reason.startsWith('DECIDE_REFUSED')) throw new SvcGateRefusal('DECIDE_REFUSED', reason, answer.rule ?? 'decide', answer.incidentId, answer.message ?? undefined);
    }
    if (answer.verdict === 'block') {
      // The registry's own code when the registry refused; HOOK_GATE otherwise.
      const code = answer.code !== null && (['SERVER_BLOCKED', 'SERVER_HELD', 'SERVER_NOT_APPROVED', 'SERVER_NOT_ALLOWED', 'TOOL_DISABLED', 'COMMAND_TOO_LARGE'] as const).includes(answer.code as never) ? (answer.code as 'HOOK_GATE') : 'HOOK_GATE';
      throw new SvcGateRefusal(code, answer.reason ?? 'the hook gate refused the call.', answer.rule ?? 'hook_gate', answer.incidentId, answer.message ?? undefined);
    }
    // Allowed, with warnings: DLP patterns that only redact, or an observe-only workspace's would-be refusal.
    if (answer.flagged.length > 0) events.push({ type: 'tool_flagged', toolName, rule: answer.flagged.join(','), reason: `${answer.flagged.join(', ')} in the arguments`, flagged: answer.flagged });
    if (answer.wouldBlock !== null) events.push({ type: 'tool_would_block', toolName, code: answer.wouldBlock.code, rule: answer.wouldBlock.rule, reason: answer.wouldBlock.reason });
  }

  /** The SOP register's rules, fetched once; none (the tier fails open) when they cannot be fetched or read. */
  private sopRules(events: HookEventInput[]): Promise<readonly CompiledSopRule[]> {
    this.sop ??= this.client!.sopRules().then(
      (rules) => {
        const parsed = z.array(sopRuleSchema).safeParse(rules.map((r) => (typeof r === 'object' && r !== null ? Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'policyId' && k !== 'policyName')) : r)));
        return parsed.success ? compileSopRules(parsed.data) : [];
      },
      () => {
        events.push({ type: 'snapshot_health', tier: 'sop_rules', problem: 'the SOP rules could not be fetched: the tier is open' });
        return [];
      },
    );
    return this.sop;
  }

  private loadedSnapshot(events: HookEventInput[]): Promise<Snapshot> {
    this.snapshot ??= loadSnapshot(this.config.snapshotPath ?? join(svcHome(this.env), 'hooks', 'policy-snapshot.rules'), this.config.workspaceId ?? this.client?.workspaceId ?? '');
    return this.snapshot.then((snapshot) => {
      if (!this.healthReported) {
        this.healthReported = true;
        events.push({ type: 'snapshot_health', trusted: snapshot.trusted, problem: snapshot.problem, warnings: snapshot.warnings });
        if (snapshot.warnings.includes('snapshot_format_newer')) events.push({ type: 'snapshot_format_newer' });
      }
      return snapshot;
    });
  }
}

/** The tier a refusal code comes from, for chaos events. */
function tierOf(code: string): string {
  if (code === 'COMMAND_TOO_LARGE') return 'size';
  if (code === 'SSO_GROUP') return 'sso';
  if (code === 'SNAPSHOT' || code === 'HELD') return 'snapshot';
  if (code === 'SOP_RULE') return 'sop_rules';
  if (code.startsWith('SERVER_') || code === 'TOOL_DISABLED' || code === 'POLICY_SNAPSHOT_UNVERIFIED') return 'mcp';
  if (code.startsWith('E_')) return 'image';
  return 'hook_gate';
}

let installed: Gate | null = null;

/** Sets the process-wide gate wrapped tools use. */
export function install(gate: Gate): Gate {
  installed = gate;
  return gate;
}

/** The process-wide gate, or null. */
export function active(): Gate | null {
  return installed;
}

const WRAPPED = Symbol.for('svc.gate.wrapped');

type AnyFunction = (...args: never[]) => unknown;

/**
 * A tool body that runs only after the gate allowed the call: the tool input is the first argument
 * when it is an object. Always returns a promise. Wrapping a wrapped tool returns it unchanged. A
 * wrapped tool called with no gate installed (or passed) throws instead of running unguarded.
 */
export function wrapTool<F extends AnyFunction>(name: string, fn: F, gate?: Gate): (...args: Parameters<F>) => Promise<Awaited<ReturnType<F>>> {
  if ((fn as unknown as Record<symbol, unknown>)[WRAPPED] === true) return fn as never;
  const wrapped = async (...args: Parameters<F>): Promise<Awaited<ReturnType<F>>> => {
    const g = gate ?? installed;
    if (g === null) throw new SvcGateRefusal('NO_GATE', `the ${name} tool is gated and no gate is installed.`, 'no_gate');
    const first = args[0] as unknown;
    await g.guard(name, typeof first === 'object' && first !== null ? first : {});
    return (await fn(...args)) as Awaited<ReturnType<F>>;
  };
  Object.defineProperty(wrapped, WRAPPED, { value: true });
  return wrapped;
}

/** Every function of a collection wrapped under its key. */
export function wrapTools<T extends Record<string, AnyFunction>>(tools: T, gate?: Gate): { [K in keyof T]: (...args: Parameters<T[K]>) => Promise<Awaited<ReturnType<T[K]>>> } {
  return Object.fromEntries(Object.entries(tools).map(([name, fn]) => [name, wrapTool(name, fn, gate)])) as never;
}

/** Headers for a model client aimed at the proxy: harness, session and workspace (falling back to SVC_SESSION_ID and SVC_WORKSPACE_ID). */
export function svcHeaders(opts: { harness?: string; sessionId?: string; workspaceId?: string } = {}, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const headers: Record<string, string> = { 'x-svc-harness': opts.harness ?? 'generic' };
  const session = opts.sessionId ?? env.SVC_SESSION_ID;
  const workspace = opts.workspaceId ?? env.SVC_WORKSPACE_ID;
  if (session) headers['x-session-id'] = session;
  if (workspace) headers['x-workspace-id'] = workspace;
  return headers;
}
