import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ControlPlaneApi } from '../config/control-plane-api.js';
import { buildRuntimeConfig, readConfigFile } from '../config/runtime.js';
import type { WorkspaceSettings } from '../config/settings.js';
import { readEngineConfig } from '../decide/engine-config.js';
import { readPins, stampFor } from '../decide/pins.js';
import { loadRules, markdownFiles } from '../decide/sop-loader.js';
import { svcHome } from '../lib/paths.js';
import type { McpServerView } from '../policy/mcp-registry.js';
import { parseBlockLine } from '../decide/snapshot.js';
import type { SopRule } from '../policy/sop-rules.js';
import { compileSnapshot, type GateRule } from './snapshot.js';

/** Where the gate reads its snapshot. */
export function snapshotPath(env: NodeJS.ProcessEnv): string {
  return join(svcHome(env), 'hooks', 'policy-snapshot.rules');
}

const RULE_LINE = /^\s*(block|hold):\s*(\{.*\})\s*$/;
const REVIEW_BEFORE = /^\s*review_before:\s*(.+?)\s*$/;

/**
 * The gate rules of the SOP files under `<root>/.svc/sops/`: `block: {json}` and `hold: {json}` lines
 * (`id`, `tools`, `reason`, optional `phrases` and `actions`), and `review_before: action:deploy, Bash`
 * entries, each a hold (an action on any tool's command, or every call of a named tool).
 */
export async function sopGateRules(root: string): Promise<GateRule[]> {
  const rules: GateRule[] = [];
  for (const file of await markdownFiles(join(root, '.svc', 'sops'))) {
    for (const line of (await readFile(file, 'utf8')).split(/\r?\n/)) {
      const rule = RULE_LINE.exec(line);
      const parsed = rule === null ? null : parseBlockLine(rule[2]!);
      if (parsed !== null) rules.push({ ...parsed, verb: rule![1] as 'block' | 'hold' });
      const review = REVIEW_BEFORE.exec(line);
      if (review === null) continue;
      for (const entry of review[1]!.split(',').map((e) => e.trim()).filter(Boolean)) {
        const action = /^action:(\w+)$/.exec(entry)?.[1];
        rules.push(
          action !== undefined
            ? { verb: 'hold', id: `review_before:action:${action}`, tools: ['*'], actions: [action], reason: `a ${action} needs a person's review first` }
            : { verb: 'hold', id: `review_before:${entry}`, tools: [entry], reason: `${entry} needs a person's review first` },
        );
      }
    }
  }
  return rules;
}

export interface SnapshotSources {
  readonly workspaceId: string;
  readonly settings: WorkspaceSettings;
  readonly mcpServers: Readonly<Record<string, McpServerView>>;
  /** The SOP register's rules (from the control plane). */
  readonly registerRules?: readonly GateRule[];
  /** The folder whose `.svc/sops/` holds SOP rules and decide rules. */
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
}

/** Compiles the snapshot from its sources and writes it atomically. */
export async function writeSnapshot(sources: SnapshotSources, out: string): Promise<{ path: string; rules: number; changed: boolean }> {
  const [rules, decide, pins, engine] = await Promise.all([sopGateRules(sources.root), loadRules(sources.root), readPins(sources.env), readEngineConfig(sources.env)]);
  const text = compileSnapshot({
    workspaceId: sources.workspaceId,
    settings: sources.settings,
    mcpServers: sources.mcpServers,
    rules: [...rules, ...(sources.registerRules ?? [])],
    memberGroups: null,
    decide: { rules: decide.rules.map((rule) => ({ rule, stamp: stampFor(rule, pins, engine.model) })), unreadable: decide.unreadable },
  });
  // The same policy as on disk: left as it is (its compile time included), so a poll changes nothing.
  const identity = (t: string) => t.split('\n').filter((l) => l.startsWith('@workspace ') || l.startsWith('@digest ')).join('\n');
  const current = await readFile(out, 'utf8').catch(() => null);
  if (current !== null && identity(current) === identity(text)) return { path: out, rules: rules.length + (sources.registerRules?.length ?? 0), changed: false };
  await mkdir(dirname(out), { recursive: true, mode: 0o700 });
  const temp = `${out}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, text, { mode: 0o600 });
  await rename(temp, out);
  return { path: out, rules: rules.length + (sources.registerRules?.length ?? 0), changed: true };
}

/** The snapshot's sources from the control plane: the workspace's settings, MCP registry and the SOP register's hold rules. */
export async function controlPlaneSources(api: ControlPlaneApi): Promise<Pick<SnapshotSources, 'workspaceId' | 'settings' | 'mcpServers' | 'registerRules'>> {
  const [settings, servers, register] = await Promise.all([
    api.json<{ workspaceId: string; settings: WorkspaceSettings }>('GET', '/workspace/settings'),
    api.json<{ servers: Array<{ name: string } & McpServerView> }>('GET', '/mcp/servers'),
    api.json<{ rules: Array<SopRule & { policyId: string }> }>('GET', '/policy/resolve'),
  ]);
  return {
    workspaceId: settings.workspaceId,
    settings: settings.settings,
    mcpServers: Object.fromEntries(servers.servers.map((s) => [s.name, { status: s.status, disabledTools: s.disabledTools }])),
    // A REQUIRE_APPROVAL rule of the register is also a hold rule of the snapshot (seed 002 rule 5), so it holds offline
    // too; the register's block rules are tier 4's (SOP_RULE), asked of the control plane.
    registerRules: register.rules
      .filter((r) => r.action === 'require_approval')
      .map((r) => ({ verb: 'hold' as const, id: r.id, tools: r.tools, reason: r.reason, ...(r.where === undefined ? {} : { where: r.where }) })),
  };
}

/** The snapshot's sources from a local config file (a workspace with no control plane). */
export async function configFileSources(file: string): Promise<Pick<SnapshotSources, 'workspaceId' | 'settings' | 'mcpServers'>> {
  const config = buildRuntimeConfig({ file: await readConfigFile(file) });
  return { workspaceId: config.workspaceId, settings: config.settings, mcpServers: config.mcpServers };
}
