import { existsSync } from 'node:fs';
import { mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { backupPath, readJsonConfig, restoreJsonConfig, writeJsonConfig, type JsonObject } from './config-file.js';
import { HARNESS_HOMES } from './harness-config.js';
import { SVC_COMMAND } from './mcp-install.js';

/** Harnesses whose hook the gate is written into. */
export const GATE_HARNESSES = ['claude-code', 'cursor', 'gemini', 'codex'] as const;
export type GateHarness = (typeof GATE_HARNESSES)[number];

export interface GateTarget {
  readonly harness: GateHarness;
  readonly file: string;
}

export interface GateChange {
  readonly harness: GateHarness;
  readonly file: string;
  readonly changed: boolean;
  readonly backup: string | null;
  readonly error: string | null;
}

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The command a harness runs before each tool call. */
export function hookCommand(harness: GateHarness): string {
  return `${SVC_COMMAND.map(quote).join(' ')} gate hook ${harness}`;
}

const ours = (command: unknown, harness: GateHarness) => typeof command === 'string' && command.endsWith(` gate hook ${harness}`);

/** Whether a harness file holds the gate svc installs: its hook command, or (Codex) svc's exec-policy rules. */
export function holdsGate(harness: GateHarness, text: string): boolean {
  return harness === 'codex' ? text.includes('prefix_rule(') : text.includes(` gate hook ${harness}`);
}

/** A gate file as it is on disk: its text (null when absent) and whether the gate is in it. */
export async function gateFileState(target: GateTarget): Promise<{ text: string | null; installed: boolean }> {
  const text = await readFile(target.file, 'utf8').catch(() => null);
  return { text, installed: text !== null && holdsGate(target.harness, text) };
}

/** The harnesses found on this machine: their config folder exists under `home`. */
export function detectGateHarnesses(home: string): GateHarness[] {
  return GATE_HARNESSES.filter((h) => existsSync(join(home, HARNESS_HOMES[h])));
}

/** The hook files: the user's own, or a project's with `projectDir`. */
export function gateTargets(home: string, harnesses: readonly GateHarness[], projectDir?: string): GateTarget[] {
  const base = projectDir ?? home;
  const files: Record<GateHarness, string> = {
    'claude-code': join(base, '.claude', 'settings.json'),
    cursor: join(base, '.cursor', 'hooks.json'),
    gemini: join(base, '.gemini', 'settings.json'),
    // A file of svc's own among Codex's exec-policy rules.
    codex: join(base, '.codex', 'rules', 'svc-gate.rules'),
  };
  return harnesses.map((harness) => ({ harness, file: files[harness] }));
}

type Groups = Array<{ matcher?: string; hooks?: Array<Record<string, unknown>> }>;

/** The matcher-group hook layout Claude Code (`PreToolUse`) and Gemini CLI (`BeforeTool`) share. */
const GROUPED = {
  'claude-code': { event: 'PreToolUse', group: () => ({ matcher: '*', hooks: [{ type: 'command', command: hookCommand('claude-code'), timeout: 10 }] }) },
  // Gemini CLI's matcher is a regular expression and its timeout is in milliseconds.
  gemini: { event: 'BeforeTool', group: () => ({ matcher: '.*', hooks: [{ type: 'command', name: 'svc-gate', command: hookCommand('gemini'), timeout: 10_000 }] }) },
} as const;

/** One hook group for every tool, running the gate with the 10-second hook timeout. */
function grouped(config: JsonObject, mode: 'install' | 'uninstall', harness: 'claude-code' | 'gemini'): boolean {
  const { event, group } = GROUPED[harness];
  const hooks = (typeof config.hooks === 'object' && config.hooks !== null ? config.hooks : {}) as Record<string, Groups>;
  const groups: Groups = Array.isArray(hooks[event]) ? hooks[event] : [];
  const present = groups.some((g) => g.hooks?.some((h) => ours(h.command, harness)));
  if (mode === 'install') {
    if (present) return false;
    config.hooks = { ...hooks, [event]: [...groups, group()] };
    return true;
  }
  if (!present) return false;
  const kept = groups.map((g) => ({ ...g, hooks: (g.hooks ?? []).filter((h) => !ours(h.command, harness)) })).filter((g) => g.hooks.length > 0);
  const rest: Record<string, Groups> = { ...hooks, [event]: kept };
  if (kept.length === 0) delete rest[event];
  if (Object.keys(rest).length === 0) delete config.hooks;
  else config.hooks = rest;
  return true;
}

const CURSOR_EVENTS = ['beforeShellExecution', 'beforeMCPExecution'] as const;

/** Cursor: the gate before every shell command and every MCP tool call. */
function cursor(config: JsonObject, mode: 'install' | 'uninstall'): boolean {
  const hooks = (typeof config.hooks === 'object' && config.hooks !== null ? config.hooks : {}) as Record<string, Array<Record<string, unknown>>>;
  let changed = false;
  const next: Record<string, Array<Record<string, unknown>>> = { ...hooks };
  for (const event of CURSOR_EVENTS) {
    const entries = Array.isArray(hooks[event]) ? hooks[event] : [];
    const present = entries.some((e) => ours(e.command, 'cursor'));
    if (mode === 'install' && !present) {
      next[event] = [...entries, { command: hookCommand('cursor') }];
      changed = true;
    } else if (mode === 'uninstall' && present) {
      const kept = entries.filter((e) => !ours(e.command, 'cursor'));
      if (kept.length === 0) delete next[event];
      else next[event] = kept;
      changed = true;
    }
  }
  if (!changed) return false;
  if (mode === 'install') config.version ??= 1;
  if (Object.keys(next).length === 0) {
    delete config.hooks;
    if (config.version === 1 && Object.keys(config).length === 1) delete config.version;
  } else config.hooks = next;
  return true;
}

/**
 * Writes the gate hook into (or takes it out of) each target, keeping `<file>.svc-backup` of the
 * original. Running install twice changes nothing; uninstall puts the backup back byte for byte
 * when nothing else changed, and removes a file install created.
 */
export async function rewriteGateHooks(
  targets: readonly GateTarget[],
  mode: 'install' | 'uninstall',
  opts: {
    dryRun: boolean;
    /** Codex's rules compiled from the policy snapshot; a string saying why not when it has none to trust. */
    codexRules: () => Promise<{ rules: string } | { problem: string }>;
  },
): Promise<GateChange[]> {
  const changes: GateChange[] = [];
  for (const { harness, file } of targets) {
    try {
      if (harness === 'codex') {
        changes.push(await rewriteCodexRules(file, mode, opts));
        continue;
      }
      const existed = existsSync(file);
      const config = (await readJsonConfig(file)) ?? {};
      const changed = harness === 'cursor' ? cursor(config, mode) : grouped(config, mode, harness);
      if (changed && !opts.dryRun) {
        if (mode === 'install') await writeJsonConfig(file, config);
        else if (Object.keys(config).length === 0 && !existsSync(backupPath(file))) await unlink(file);
        else await restoreJsonConfig(file, config);
      }
      changes.push({ harness, file, changed, backup: existed && mode === 'install' ? backupPath(file) : null, error: null });
    } catch (err) {
      changes.push({ harness, file, changed: false, backup: null, error: (err as Error).message });
    }
  }
  return changes;
}

/** Codex reads exec-policy rules, not hooks: svc's rules file is written whole from the snapshot, or removed. */
async function rewriteCodexRules(file: string, mode: 'install' | 'uninstall', opts: Parameters<typeof rewriteGateHooks>[2]): Promise<GateChange> {
  const current = await readFile(file, 'utf8').catch(() => null);
  if (mode === 'uninstall') {
    if (current !== null && !opts.dryRun) await unlink(file);
    return { harness: 'codex', file, changed: current !== null, backup: null, error: null };
  }
  const compiled = await opts.codexRules();
  if ('problem' in compiled) return { harness: 'codex', file, changed: false, backup: null, error: compiled.problem };
  if (current === compiled.rules) return { harness: 'codex', file, changed: false, backup: null, error: null };
  if (!opts.dryRun) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, compiled.rules, { mode: 0o644 });
  }
  return { harness: 'codex', file, changed: true, backup: null, error: null };
}
