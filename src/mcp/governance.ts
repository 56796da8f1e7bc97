import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RuntimeConfig } from '../config/runtime.js';
import { enginesFor } from '../policy/engines.js';
import type { Finding } from '../policy/inspect.js';
import { mcpPolicyFrom, type McpPolicy } from '../policy/mcp.js';
import { budgetCounters, pastWarning, type McpBudget } from '../policy/mcp-budgets.js';
import type { Store } from '../state/store.js';
import { toolCallNotice, type RefusedVerdict } from '../policy/notice.js';
import { buildPolicyConfig, type PolicyConfig } from '../policy/policy-config.js';
import type { ToolCall, ToolCallContext } from '../policy/tool-judge.js';
import { judgeToolCalls, redactCallArguments, type ArgumentsDlp } from '../policy/tool-verdict.js';
import { pinnedToolSet } from '../policy/mcp-tool-changes.js';
import { injectionInDescriptions, inspectToolResult } from './inspection.js';
import { ConfiguredRegistry, type ServerRegistry } from './registry-client.js';
import type { McpSessionAnomalies } from './session-anomalies.js';

/** What the wrapper does when it has no settings to enforce (seed 001: mcpProxyFailBehavior). */
export type FailBehavior = 'open' | 'closed';

/** How a call fared: `allow` ran as asked, `redacted` ran with DLP redactions, `warned` ran with a finding, `block` and `hold` were refused. */
export type CallOutcome = 'allow' | 'redacted' | 'warned' | 'block' | 'hold';

/** The verdict on a `tools/call` before it reaches the server. */
export type CallDecision =
  | { readonly kind: 'forward'; readonly arguments: Record<string, unknown> | undefined; readonly outcome: 'allow' | 'redacted'; readonly findings: readonly string[]; readonly warnings: readonly string[] }
  | { readonly kind: 'refuse'; readonly result: CallToolResult; readonly outcome: 'block' | 'hold'; readonly code: string | null; readonly rule: string };

/** The verdict on the server's answer to a call. */
export interface ResultReview {
  readonly result: Record<string, unknown>;
  readonly findings: readonly Finding[];
  /** The rule that withheld the result, when one did. */
  readonly blockedBy: string | null;
}

/** The settings a wrapper enforces, or why there are none. */
export type GovernanceSettings = { readonly ok: true; readonly config: RuntimeConfig } | { readonly ok: false; readonly reason: string; readonly failBehavior: FailBehavior };

const PREFIX = '[Svc Governance] BLOCKED:';

/** The refusal code of a call past an mcpBudgets limit (the seeds name none for it). */
export const MCP_BUDGET_EXCEEDED = 'MCP_BUDGET_EXCEEDED';

const scanner = (policy: PolicyConfig) => enginesFor(policy).dlp!;

/**
 * The workspace's MCP policy for one wrapped server: judges each `tools/call` with the one
 * tool-call verdict (`judgeToolCalls`: mcpDefaultPolicy, mcpAllowedServers, mcpAllowedTools, DLP
 * on the arguments), reviews each result (DLP, prompt injection), and rewrites tool listings
 * (mcpToolDescriptionOverrides; descriptions carrying an injection are withheld under block).
 */
export class McpGovernance {
  private readonly policy: PolicyConfig | null;
  private readonly mcp: McpPolicy;
  private readonly overrides: Readonly<Record<string, string>>;
  /** Tools withheld from listings because their descriptions carry an injection; their calls are refused. */
  private readonly poisoned = new Map<string, Finding>();
  private readonly budgets: readonly McpBudget[];
  private readonly warnAtPct: number | undefined;
  /** Who the calls are made for (SVC_MEMBER_ID), for member budgets; null when unknown. */
  private readonly memberId: string | null;
  private readonly registry: ServerRegistry;
  private readonly clock: () => number;
  /** mcpProxyFailBehavior: what a call gets when a check needs the control plane and it cannot be reached. */
  private readonly failBehavior: FailBehavior;

  constructor(
    readonly server: string,
    private readonly settings: GovernanceSettings,
    env: NodeJS.ProcessEnv,
    /** Where calls are counted against mcpBudgets: shared (Redis) across wrappers, or this process's own. */
    private readonly store: Store,
    opts: {
      /** The MCP server registry (the control plane's, or what the config says); default: the config's. */
      readonly registry?: ServerRegistry;
      readonly clock?: () => number;
    } = {},
  ) {
    this.memberId = env.SVC_MEMBER_ID || null;
    this.clock = opts.clock ?? Date.now;
    this.registry = opts.registry ?? new ConfiguredRegistry(settings.ok ? settings.config.mcpServers[server] : undefined);
    this.failBehavior = settings.ok ? (settings.config.settings.mcpProxyFailBehavior ?? 'open') : settings.failBehavior;
    if (settings.ok) {
      const s = settings.config.settings;
      this.policy = buildPolicyConfig({ version: settings.config.version, settings: s, localPii: settings.config.piiDetectors, env });
      this.mcp = mcpPolicyFrom(s);
      this.overrides = s.mcpToolDescriptionOverrides ?? {};
      this.budgets = s.mcpBudgets?.budgets ?? [];
      this.warnAtPct = s.mcpBudgets?.warnAtPct;
    } else {
      this.policy = null;
      this.mcp = {};
      this.overrides = {};
      this.budgets = [];
      this.warnAtPct = undefined;
    }
  }

  get workspaceId(): string {
    return this.settings.ok ? this.settings.config.workspaceId : 'local';
  }

  /**
   * The call's verdict. Never rejects: a check that fails refuses the call. `session` holds the
   * session's calls for the anomaly detectors; a call that is forwarded stays in it.
   */
  async judgeCall(tool: string, args: Record<string, unknown> | undefined, ctx: ToolCallContext, session?: McpSessionAnomalies): Promise<CallDecision> {
    if (this.policy === null) return this.withoutSettings(tool);
    const poison = this.poisoned.get(tool);
    if (poison !== undefined) {
      return refuse(tool, { action: 'block', source: 'mcp', rule: 'mcpInjectionAction', reason: `the description of tool '${tool}' carries a prompt injection (${poison.detector})` });
    }
    const warnings: string[] = [];
    const entry = await this.registry.view();
    if (entry === 'unreachable') {
      const reason = 'the MCP server registry on the control plane cannot be reached and has no word on this server or its tool set';
      if (this.failBehavior === 'closed') return unavailable(tool, reason);
      warnings.push(`governance check incomplete, failing open (mcpProxyFailBehavior): ${reason}`);
    }
    const mcp: McpPolicy = entry === null || entry === 'unreachable' ? this.mcp : { ...this.mcp, servers: { [this.server]: entry } };
    const call: ToolCall = { id: ctx.traceId, name: `mcp__${this.server}__${tool}`, arguments: JSON.stringify(args ?? {}), input: 'json' };
    const dlp = this.argumentsDlp(this.policy);
    const [verdict] = await judgeToolCalls([call], ctx, { judges: [], mcp, dlp, holds: null });
    if (verdict === undefined || verdict.action !== 'allow') {
      const refused: RefusedVerdict = verdict ?? { action: 'block', source: 'mcp', rule: 'judge_failure', reason: 'no verdict was reached' };
      if (this.policy.shadow) return { kind: 'forward', arguments: args, outcome: 'allow', findings: [], warnings: [...warnings, `would ${refused.action}: ${refused.reason}`] };
      return refuse(tool, refused);
    }
    const flagged = verdict.flagged ?? [];
    const forward: CallDecision =
      flagged.length === 0 || this.policy.shadow || dlp === undefined
        ? { kind: 'forward', arguments: args, outcome: 'allow', findings: flagged, warnings }
        : { kind: 'forward', arguments: redactCallArguments(args, scanner(this.policy), dlp.actions) as Record<string, unknown>, outcome: 'redacted', findings: flagged, warnings };
    const judged = this.afterAnomalies(tool, args, forward, ctx.traceId, session);
    if (judged.kind === 'refuse') return judged;
    const decision = await this.counted(tool, judged, this.policy.shadow);
    if (decision.kind === 'refuse') session?.forget(ctx.traceId);
    return decision;
  }

  /**
   * The anomaly detectors over the session with this call added (mcpAnomalyMode,
   * mcpAnomalyOverrides): a finding that draws a response (steer, reask or kill — for an MCP call
   * each means the call is not made) refuses it with the detector's account and what to do
   * instead; findings that draw none are noted.
   */
  private afterAnomalies(
    tool: string,
    args: Record<string, unknown> | undefined,
    forward: Extract<CallDecision, { kind: 'forward' }>,
    id: string,
    session: McpSessionAnomalies | undefined,
  ): CallDecision {
    if (session === undefined || this.policy === null) return forward;
    const decision = session.judge(this.policy.anomaly, this.policy.shadow, { id, tool, input: args });
    if (decision === null) return forward;
    const noted = decision.findings.map((f) => `anomaly ${f.detector} (${f.action}, ${f.confidence}): ${f.summary}`);
    const acting = decision.acting[0];
    if (decision.response === null || acting === undefined) return { ...forward, warnings: [...forward.warnings, ...noted] };
    session.forget(id);
    const advice = decision.card ?? 'Stop repeating it: change the approach, or ask the user.';
    return refuse(tool, { action: 'block', source: 'mcp', rule: `anomaly.${acting.detector}`, code: 'ANOMALY', reason: `${acting.summary}. ${advice}` });
  }

  /**
   * A call about to be forwarded, counted against every mcpBudgets budget that applies: refused
   * when one is already at its limit (only noted in shadow mode), noted when a count reaches
   * warnAtPct of its limit or could only be counted by this process.
   */
  private async counted(tool: string, forward: Extract<CallDecision, { kind: 'forward' }>, shadow: boolean): Promise<CallDecision> {
    const counters = budgetCounters(this.budgets, { server: this.server, tool, memberId: this.memberId }, this.clock());
    if (counters.length === 0) return forward;
    const result = await this.store.countCall({ workspace: this.workspaceId, counters, now: this.clock() });
    const warnings = [...forward.warnings];
    if (result.degraded) warnings.push('store_degraded: MCP budgets counted by this process alone');
    if (result.exceeded !== null) {
      const { budget } = counters[result.exceeded]!;
      const reason = `budget '${budget.id}' allows ${budget.limit} calls per ${budget.period} and all of them are used`;
      if (!shadow) return refuse(tool, { action: 'block', source: 'mcp', rule: 'mcpBudgets', code: MCP_BUDGET_EXCEEDED, reason });
      return { ...forward, warnings: [...warnings, `would block: ${reason}`] };
    }
    counters.forEach((c, i) => {
      if (pastWarning(result.counts[i]!, c.limit, this.warnAtPct)) warnings.push(`mcp_budget_warning: budget '${c.budget.id}' at ${result.counts[i]} of ${c.limit} calls this ${c.budget.period}`);
    });
    return { ...forward, warnings };
  }

  /** Reviews the server's result in place: redacted where DLP says so, withheld when DLP or an injection pattern blocks it. */
  reviewResult(tool: string, result: Record<string, unknown>): ResultReview {
    if (this.policy === null) return { result, findings: [], blockedBy: null };
    const inspection = inspectToolResult(this.policy, result);
    if (inspection.blockedBy === null) return { result, findings: inspection.findings, blockedBy: null };
    const by = inspection.blockedBy;
    const what = by.detector.startsWith('pii.') ? `${by.detector} found in it` : `it carries a prompt injection (${by.detector})`;
    const text = `${PREFIX} the result of the ${tool} tool call was withheld by policy: ${what}.`;
    return { result: { content: [{ type: 'text', text }], isError: true }, findings: inspection.findings, blockedBy: by.detector };
  }

  /**
   * A `tools/list` result as the model may see it: each description replaced by its override
   * (by the tool's name or its `mcp__<server>__<tool>` name), then each tool whose description
   * (or a parameter's) carries a prompt injection withheld under block, or reported under warn.
   * Answers the injection findings it acted on or reported.
   */
  rewriteToolList(result: Record<string, unknown>): { result: Record<string, unknown>; injections: ReadonlyArray<{ tool: string; finding: Finding }> } {
    if (this.policy === null || !Array.isArray(result.tools)) return { result, injections: [] };
    const tools = (result.tools as unknown[]).map((t) => this.withOverride(t));
    const texts: string[] = [];
    const owner: number[] = [];
    tools.forEach((tool, i) => {
      for (const text of descriptionsOf(tool)) {
        texts.push(text);
        owner.push(i);
      }
    });
    const injections: Array<{ tool: string; finding: Finding }> = [];
    const withheld = new Set<number>();
    for (const [index, finding] of injectionInDescriptions(this.policy, texts)) {
      const i = owner[index]!;
      const name = toolName(tools[i]);
      if (withheld.has(i) || name === null) continue;
      injections.push({ tool: name, finding });
      if (finding.action === 'block' && !this.policy.shadow) {
        withheld.add(i);
        this.poisoned.set(name, finding);
      }
    }
    return { result: { ...result, tools: tools.filter((_, i) => !withheld.has(i)) }, injections };
  }

  private withOverride(tool: unknown): unknown {
    const name = toolName(tool);
    if (name === null) return tool;
    const override = this.overrides[name] ?? this.overrides[`mcp__${this.server}__${name}`];
    return override === undefined ? tool : { ...(tool as object), description: override };
  }

  private argumentsDlp(policy: PolicyConfig): ArgumentsDlp | undefined {
    const scanner = enginesFor(policy).dlp;
    return scanner === null ? undefined : { scan: (text) => scanner.scan(text), actions: policy.pii };
  }

  /**
   * The tool set the server lists now (from a `tools/list` answer), reported to the registry to
   * be compared with the server's pin; calls wait for its word.
   */
  observeTools(listed: readonly unknown[] | Promise<readonly unknown[] | null>): void {
    if (this.policy === null) return;
    this.registry.observe(Promise.resolve(listed).then((tools) => (tools === null ? null : pinnedToolSet(tools))));
  }

  private withoutSettings(tool: string): CallDecision {
    const s = this.settings as Extract<GovernanceSettings, { ok: false }>;
    if (s.failBehavior === 'open') return { kind: 'forward', arguments: undefined, outcome: 'allow', findings: [], warnings: [`governance unavailable, failing open: ${s.reason}`] };
    return unavailable(tool, `the workspace's MCP settings could not be loaded (${s.reason})`);
  }
}

function unavailable(tool: string, reason: string): CallDecision {
  const text = `${PREFIX} GOVERNANCE_UNAVAILABLE: the ${tool} tool call was not run: ${reason}.`;
  return { kind: 'refuse', result: { content: [{ type: 'text', text }], isError: true }, outcome: 'block', code: 'GOVERNANCE_UNAVAILABLE', rule: 'mcpProxyFailBehavior' };
}

function refuse(tool: string, verdict: RefusedVerdict): CallDecision {
  const text = toolCallNotice({ name: tool }, verdict);
  const code = verdict.action === 'hold' ? 'HELD' : (verdict.code ?? null);
  return { kind: 'refuse', result: { content: [{ type: 'text', text }], isError: true }, outcome: verdict.action, code, rule: verdict.rule };
}

function toolName(tool: unknown): string | null {
  return typeof tool === 'object' && tool !== null && typeof (tool as { name?: unknown }).name === 'string' ? (tool as { name: string }).name : null;
}

/** The tool's description and every `description` string in its input schema (where poisoning often hides). */
function descriptionsOf(tool: unknown): string[] {
  const out: string[] = [];
  if (typeof tool !== 'object' || tool === null) return out;
  const t = tool as { description?: unknown; inputSchema?: unknown };
  if (typeof t.description === 'string') out.push(t.description);
  const visit = (node: unknown, depth: number): void => {
    if (depth > 32 || typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'description' && typeof value === 'string') out.push(value);
      else visit(value, depth + 1);
    }
  };
  visit(t.inputSchema, 0);
  return out;
}
