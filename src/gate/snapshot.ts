import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { WorkspaceSettings } from '../config/settings.js';
import { decideSnapshotLines, parseBlockLine, readSnapshot, type BlockLine, type DecodedDecide, type SnapshotRule } from '../decide/snapshot.js';
import type { UnreadableLine } from '../decide/sop-loader.js';
import type { McpServerView } from '../policy/mcp-registry.js';
import type { McpPolicy } from '../policy/mcp.js';
import { matchesWhere, parseWhere, type WhereNode } from '../policy/where.js';
import { ACTIONS, commandOf, matchesPhrase, performsAction, type Action } from './commands.js';

/**
 * The policy snapshot (seed 002): `~/.svc/hooks/policy-snapshot.rules`, compiled for one workspace
 * and trusted only when its digest and workspace check out.
 *
 *   # comment lines
 *   @workspace <id>
 *   @digest <SHA-256 of every line after this one>
 *   block {"id","tools","reason","phrases"?,"actions"?,"destructive"?}   refuse (SNAPSHOT)
 *   hold {…same}                                                        hold for a person (HELD)
 *   sso {"highRiskTools","requiredGroups","requireOboFor","memberGroups"}
 *   mcp {"defaultPolicy","allowedServers","allowedTools","servers","observeOnly"}
 *   @format 3 / @decide … / block {"id":"decide-fallback:…"}            (decide rules, see src/decide/snapshot.ts)
 *
 * A rule with `phrases` or `actions` applies to the shell command a call runs (`tools: ["*"]`: any
 * tool that runs one); without them, to every call of its tools.
 */

export type GateRule = BlockLine & { readonly verb: 'block' | 'hold' | 'log' };

export interface SsoPolicy {
  readonly highRiskTools: readonly string[];
  readonly requiredGroups: readonly string[];
  readonly requireOboFor: readonly string[];
  /** The groups of the member the snapshot was issued to; null when unknown. */
  readonly memberGroups: readonly string[] | null;
}

export interface SnapshotMcp extends McpPolicy {
  /** ff_shadow_enforcement: MCP refusals are reported as tool_would_block and the call proceeds. */
  readonly observeOnly: boolean;
}

export interface Snapshot {
  /** Digest and workspace check out. An untrusted snapshot's rules are dropped; its SSO policy still refuses. */
  readonly trusted: boolean;
  /** Why it is not trusted. */
  readonly problem: string | null;
  readonly workspaceId: string | null;
  readonly rules: readonly GateRule[];
  readonly sso: SsoPolicy | null;
  readonly mcp: SnapshotMcp | null;
  readonly decide: readonly DecodedDecide[];
  readonly warnings: readonly string[];
}

/** Destructive-command rules every snapshot carries (skipped with SVC_GUARD_DISABLE=1). */
export const DESTRUCTIVE_RULES: readonly BlockLine[] = [
  { id: 'destructive:force-push', tools: ['*'], phrases: ['git push --force', 'git push -f', 'git push --mirror'], reason: 'a forced push rewrites the remote history others build on', destructive: true },
  { id: 'destructive:rm-root', tools: ['*'], phrases: ['rm -rf /', 'rm -fr /', 'rm -rf /*', 'rm -rf ~', 'rm -fr ~', 'rm -rf $HOME', 'rm -rf ~/'], reason: 'it deletes the whole file system or home folder', destructive: true },
  { id: 'destructive:disk', tools: ['*'], phrases: ['mkfs', 'mkfs.ext4', 'wipefs', 'shred /dev'], reason: 'it erases a disk', destructive: true },
  { id: 'destructive:infra-teardown', tools: ['*'], phrases: ['terraform destroy', 'tofu destroy', 'pulumi destroy', 'kubectl delete namespace', 'kubectl delete ns'], reason: 'it tears down infrastructure', destructive: true },
];

const stringList = z.array(z.string().min(1).max(256)).max(500);
const ssoSchema = z.object({ highRiskTools: stringList.default([]), requiredGroups: stringList.default([]), requireOboFor: stringList.default([]), memberGroups: stringList.nullable().default(null) });
const mcpSchema = z.object({
  defaultPolicy: z.enum(['allow', 'deny']).optional(),
  allowedServers: stringList.optional(),
  allowedTools: stringList.optional(),
  servers: z.record(z.string(), z.object({ status: z.enum(['approved', 'unreviewed', 'pending', 'held', 'blocked']), disabledTools: stringList.default([]) })).default({}),
  observeOnly: z.boolean().default(false),
});

export interface SnapshotInput {
  readonly workspaceId: string;
  readonly settings: WorkspaceSettings;
  /** The MCP server registry's word on each server. */
  readonly mcpServers: Readonly<Record<string, McpServerView>>;
  /** Block, hold and log rules besides the built-in destructive-command ones (SOPs, review_before entries). */
  readonly rules: readonly GateRule[];
  /** The member's identity-provider groups, when known. */
  readonly memberGroups: readonly string[] | null;
  readonly decide?: { readonly rules: readonly SnapshotRule[]; readonly unreadable: readonly UnreadableLine[] };
}

const digestOf = (body: string) => createHash('sha256').update(body).digest('hex');

/** The snapshot text for a workspace. A workspace with no decide rule has no `@format` line (the 2.9 snapshot). */
export function compileSnapshot(input: SnapshotInput, now = new Date()): string {
  const s = input.settings;
  const body: string[] = [];
  for (const rule of DESTRUCTIVE_RULES) body.push(`block ${JSON.stringify(rule)}`);
  for (const { verb, ...rule } of input.rules) body.push(`${verb} ${JSON.stringify(rule)}`);
  const sso = s.sso_group_policy;
  if (sso !== undefined && sso !== null) body.push(`sso ${JSON.stringify({ ...sso, memberGroups: input.memberGroups })}`);
  const mcp = {
    defaultPolicy: s.mcpDefaultPolicy ?? 'allow',
    allowedServers: s.mcpAllowedServers ?? [],
    allowedTools: s.mcpAllowedTools ?? [],
    servers: input.mcpServers,
    observeOnly: s.featureFlags?.ff_shadow_enforcement === true,
  };
  body.push(`mcp ${JSON.stringify(mcp)}`);
  if (input.decide !== undefined) body.push(...decideSnapshotLines(input.decide.rules, input.decide.unreadable, { silentLogging: s.featureFlags?.ff_shadow_enforcement === true }));
  const text = body.join('\n');
  return [`# svc policy snapshot, compiled ${now.toISOString()}; an edit breaks its digest`, `@workspace ${input.workspaceId}`, `@digest ${digestOf(text)}`, text, ''].join('\n');
}

/** Block, hold and log lines of a text (a snapshot's body or a SOP register's rules), in order. */
export function parseRules(text: string): GateRule[] {
  const rules: GateRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const m = /^(block|hold|log)\s+(\{.*\})\s*$/.exec(raw.trim());
    const line = m === null ? null : parseBlockLine(m[2]!);
    if (line !== null) rules.push({ ...line, verb: m![1] as GateRule['verb'] });
  }
  return rules;
}

const clauses = new Map<string, WhereNode | null>();

/** A rule's clause, parsed once; null (the rule never applies) when it does not read. */
function clauseOf(where: string): WhereNode | null {
  if (!clauses.has(where)) {
    let node: WhereNode | null = null;
    try {
      node = parseWhere(where);
    } catch {
      node = null;
    }
    if (clauses.size > 10_000) clauses.clear();
    clauses.set(where, node);
  }
  return clauses.get(where)!;
}

/**
 * Whether a rule applies to the call: its tool (or any tool, `*`), its WHERE clause over the input,
 * then its phrases or actions on the command the call runs.
 */
function applies(rule: BlockLine, toolName: string, input: unknown): boolean {
  if (!rule.tools.includes(toolName) && !rule.tools.includes('*')) return false;
  if (rule.where !== undefined) {
    const clause = clauseOf(rule.where);
    if (clause === null || !matchesWhere(clause, { tool: toolName, input })) return false;
    if (rule.phrases === undefined && rule.actions === undefined) return true;
  }
  const phrases = rule.phrases ?? [];
  const actions = (rule.actions ?? []).filter((a): a is Action => (ACTIONS as readonly string[]).includes(a));
  if (phrases.length === 0 && actions.length === 0) return rule.tools.includes(toolName);
  const command = commandOf(input);
  if (command === null) return false;
  return phrases.some((p) => matchesPhrase(command, p)) || actions.some((a) => performsAction(command, a));
}

/** The first rule that applies to the call, if any. */
export function firstMatch<R extends BlockLine>(rules: readonly R[], toolName: string, input: unknown): R | undefined {
  return rules.find((r) => applies(r, toolName, input));
}

const UNTRUSTED = (problem: string, sso: SsoPolicy | null): Snapshot => ({ trusted: false, problem, workspaceId: null, rules: [], sso, mcp: null, decide: [], warnings: [] });

/** Reads a snapshot's text; `workspaceId` (when not empty) must be the one it was compiled for. */
export function readGateSnapshot(text: string, workspaceId: string): Snapshot {
  const lines = text.split(/\r?\n/);
  const ssoLine = lines.find((l) => l.startsWith('sso '));
  let sso: SsoPolicy | null = null;
  if (ssoLine !== undefined) {
    try {
      sso = ssoSchema.parse(JSON.parse(ssoLine.slice(4)));
    } catch {
      sso = null;
    }
  }
  const digestAt = lines.findIndex((l) => l.startsWith('@digest '));
  if (digestAt === -1) return UNTRUSTED('it has no digest', sso);
  const workspace = lines.slice(0, digestAt).find((l) => l.startsWith('@workspace '))?.slice('@workspace '.length).trim() ?? null;
  const body = lines.slice(digestAt + 1).join('\n').replace(/\n$/, '');
  if (digestOf(body) !== lines[digestAt]!.slice('@digest '.length).trim()) return UNTRUSTED('its digest does not match its content', sso);
  if (workspaceId !== '' && workspace !== workspaceId) return UNTRUSTED(`it was compiled for workspace ${workspace ?? '(none)'}, not ${workspaceId}`, sso);
  const read = readSnapshot(body);
  const holds = parseRules(body).filter((r) => r.verb === 'hold');
  let mcp: SnapshotMcp | null = null;
  const mcpLine = lines.slice(digestAt + 1).find((l) => l.startsWith('mcp '));
  if (mcpLine !== undefined) {
    try {
      mcp = mcpSchema.parse(JSON.parse(mcpLine.slice(4)));
    } catch {
      return UNTRUSTED('its MCP policy does not read', sso);
    }
  }
  const rules: GateRule[] = [...read.blocks.map((b) => ({ ...b, verb: 'block' as const })), ...holds, ...read.logs.map((b) => ({ ...b, verb: 'log' as const }))];
  return { trusted: true, problem: null, workspaceId: workspace, rules, sso, mcp, decide: read.decide, warnings: [...read.warnings, ...read.damaged.map((n) => `decide record at line ${n} is damaged: its fallback stays in force`)] };
}

/** Reads the snapshot file; a missing or unreadable one is untrusted. */
export async function loadSnapshot(path: string, workspaceId: string): Promise<Snapshot> {
  try {
    return readGateSnapshot(await readFile(path, 'utf8'), workspaceId);
  } catch (err) {
    return UNTRUSTED((err as NodeJS.ErrnoException).code === 'ENOENT' ? `there is no snapshot at ${path}` : `it cannot be read: ${(err as Error).message}`, null);
  }
}

