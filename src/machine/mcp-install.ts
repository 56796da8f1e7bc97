import { join } from 'node:path';
import { ConfigError } from '../lib/errors.js';
import { fileURLToPath } from 'node:url';
import { backupPath, readJsonConfig, restoreJsonConfig, writeJsonConfig, type JsonObject } from './config-file.js';

export const MCP_HARNESSES = ['claude-code', 'cursor', 'gemini'] as const;
export type McpHarness = (typeof MCP_HARNESSES)[number];

/** The command a wrapped entry runs: this Node and this svc, so it works without svc on PATH. */
export const SVC_COMMAND: readonly [string, string] = [process.execPath, fileURLToPath(new URL('../cli/main.js', import.meta.url))];

interface ConfigTarget {
  readonly harness: McpHarness;
  readonly file: string;
  /** The `mcpServers` maps in the file: Claude Code's user file has one per project too. */
  servers(config: JsonObject): JsonObject[];
}

const topLevel = (config: JsonObject): JsonObject[] => (isObject(config.mcpServers) ? [config.mcpServers] : []);

/** Every MCP config file of the harnesses, user-wide and for the project in `projectDir`. */
export function mcpConfigTargets(home: string, projectDir: string, harnesses: readonly McpHarness[] = MCP_HARNESSES): ConfigTarget[] {
  const all: ConfigTarget[] = [
    { harness: 'claude-code', file: join(projectDir, '.mcp.json'), servers: topLevel },
    {
      harness: 'claude-code',
      file: join(home, '.claude.json'),
      servers: (config) => [...topLevel(config), ...Object.values(isObject(config.projects) ? config.projects : {}).flatMap((p) => (isObject(p) ? topLevel(p) : []))],
    },
    { harness: 'cursor', file: join(home, '.cursor', 'mcp.json'), servers: topLevel },
    { harness: 'cursor', file: join(projectDir, '.cursor', 'mcp.json'), servers: topLevel },
    { harness: 'gemini', file: join(home, '.gemini', 'settings.json'), servers: topLevel },
    { harness: 'gemini', file: join(projectDir, '.gemini', 'settings.json'), servers: topLevel },
  ];
  return all.filter((t) => harnesses.includes(t.harness));
}

export interface FileChange {
  readonly harness: McpHarness;
  readonly file: string;
  /** Servers wrapped (install) or unwrapped (uninstall) in this file. */
  readonly changed: readonly string[];
  /** Servers reached over HTTP: left as they are (front them with `svc mcp proxy`). */
  readonly overHttp: readonly string[];
  /** Entries neither stdio nor HTTP as far as can be told: left as they are. */
  readonly unknown: readonly string[];
  /** Where the original was kept, when the file was changed. */
  readonly backup: string | null;
  /** Why the file was left untouched (not valid JSON, unreadable), or null. */
  readonly error: string | null;
}

/**
 * Rewrites every stdio MCP server entry of the harnesses' config files to run through
 * `svc mcp wrap --server <name> -- <command> [args…]` (entries already wrapped are left alone, so
 * running it twice changes nothing), or with `uninstall` puts each wrapped entry's own command
 * back, leaving whatever else the user changed since. A file that is not valid JSON is reported
 * (`error`) and left untouched, and the others are still done; a file that does not exist is skipped.
 */
export async function rewriteMcpConfigs(
  targets: readonly ConfigTarget[],
  mode: 'install' | 'uninstall',
  options: { dryRun: boolean; svcCommand?: readonly [string, string] },
): Promise<FileChange[]> {
  const svc = options.svcCommand ?? SVC_COMMAND;
  const changes: FileChange[] = [];
  for (const target of targets) {
    let config: JsonObject | null;
    try {
      config = await readJsonConfig(target.file);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      changes.push({ harness: target.harness, file: target.file, changed: [], overHttp: [], unknown: [], backup: null, error: err.message });
      continue;
    }
    if (config === null) continue;
    const changed: string[] = [];
    const overHttp: string[] = [];
    const unknown: string[] = [];
    for (const servers of target.servers(config)) {
      for (const [name, entry] of Object.entries(servers)) {
        if (!isObject(entry)) continue;
        const wrapped = wrappedCommand(entry);
        if (mode === 'uninstall') {
          if (wrapped === null) continue;
          servers[name] = unwrap(entry, wrapped);
          changed.push(name);
        } else if (wrapped !== null) {
          continue;
        } else if (overHttpEntry(entry)) {
          overHttp.push(name);
        } else if (typeof entry.command === 'string' && entry.command !== '' && (entry.args === undefined || isStringArray(entry.args))) {
          servers[name] = wrap(entry, name, svc);
          changed.push(name);
        } else {
          unknown.push(name);
        }
      }
    }
    if (changed.length > 0 && !options.dryRun) await (mode === 'install' ? writeJsonConfig(target.file, config) : restoreJsonConfig(target.file, config));
    if (changed.length + overHttp.length + unknown.length > 0) {
      changes.push({ harness: target.harness, file: target.file, changed, overHttp, unknown, backup: changed.length > 0 ? backupPath(target.file) : null, error: null });
    }
  }
  return changes;
}

function wrap(entry: JsonObject, name: string, svc: readonly [string, string]): JsonObject {
  const args = (entry.args as string[] | undefined) ?? [];
  return { ...entry, command: svc[0], args: [svc[1], 'mcp', 'wrap', '--server', name, '--', entry.command as string, ...args] };
}

/** The server's own command line inside a wrapped entry, or null when the entry is not one of ours. */
function wrappedCommand(entry: JsonObject): string[] | null {
  if (!isStringArray(entry.args)) return null;
  const args = entry.args;
  const at = args.findIndex((a, i) => a === 'mcp' && args[i + 1] === 'wrap');
  const dashes = args.indexOf('--', at);
  if (at === -1 || dashes === -1 || dashes === args.length - 1) return null;
  return args.slice(dashes + 1);
}

/** The entry as it was before `wrap`, its keys in their order (an entry written without `args` gets none back). */
function unwrap(entry: JsonObject, command: string[]): JsonObject {
  const [program, ...args] = command;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'command') out.command = program;
    else if (key === 'args') {
      if (args.length > 0) out.args = args;
    } else out[key] = value;
  }
  return out;
}

function overHttpEntry(entry: JsonObject): boolean {
  return typeof entry.url === 'string' || typeof entry.httpUrl === 'string' || typeof entry.serverUrl === 'string' || ['http', 'sse', 'streamable-http', 'streamableHttp'].includes(String(entry.type));
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
