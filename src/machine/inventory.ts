import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { hostname, platform } from 'node:os';
import { join, relative } from 'node:path';
import { redactMcpUrl, type DeviceReportInput } from '../config/inventory-report.js';
import { gateEventFile } from '../gate/hook.js';
import { VERSION } from '../lib/version.js';
import { readJsonConfig, type JsonObject } from './config-file.js';
import { GATE_HARNESSES, gateFileState, gateTargets } from './gates-install.js';
import { HARNESS_HOMES, INIT_HARNESSES } from './harness-config.js';
import { MCP_HARNESSES, mcpConfigTargets } from './mcp-install.js';
import { auditFile } from './skill-audit.js';
import { skillBundles } from './skill-files.js';

/**
 * What `svc connect` reports about this machine (seed 002 "Inventory objects"): harnesses and their
 * gates, MCP servers and whether the governance proxy fronts them, skill bundles. Never file contents,
 * environment values or command lines; a path outside the home directory is `[redacted]`.
 */

/** Harnesses svc finds but cannot put a gate into (no tool-call hook a gate can attach to). */
const UNGATED_HARNESSES = INIT_HARNESSES.filter((h) => !(GATE_HARNESSES as readonly string[]).includes(h));

function inHome(home: string, path: string): string {
  const rel = relative(home, path);
  return rel.startsWith('..') || rel === '' ? '[redacted]' : rel;
}

export function machineFingerprint(): string {
  let machineId = '';
  for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      machineId = readFileSync(file, 'utf8').trim();
      break;
    } catch {
      // The next source.
    }
  }
  return createHash('sha256').update(`${hostname()}\u0000${platform()}\u0000${machineId}`).digest('hex');
}

async function harnesses(home: string, env: NodeJS.ProcessEnv): Promise<DeviceReportInput['harnesses']> {
  const out: DeviceReportInput['harnesses'] = [];
  for (const target of gateTargets(home, GATE_HARNESSES)) {
    const { harness, file } = target;
    if (!existsSync(join(home, HARNESS_HOMES[harness]))) continue;
    const onDisk = (await gateFileState(target)).installed;
    const installedAt = onDisk ? (await stat(file)).mtime.toISOString() : null;
    let last: { at?: string; guardsDisabledAt?: string } = {};
    try {
      last = JSON.parse(await readFile(gateEventFile(env, harness), 'utf8')) as typeof last;
    } catch {
      // No gate event yet.
    }
    out.push({
      type: harness,
      connectConfigured: onDisk,
      gateKind: onDisk ? 'hook' : 'none',
      gateFile: onDisk ? inHome(home, file) : null,
      gateFileOnDisk: onDisk,
      gateInstalledAt: installedAt,
      lastGateEventAt: last.at ?? null,
      lastGuardsDisabledAt: last.guardsDisabledAt ?? null,
    });
  }
  for (const type of UNGATED_HARNESSES) {
    if (existsSync(join(home, HARNESS_HOMES[type]))) out.push({ type, connectConfigured: false, gateKind: 'none', gateFileOnDisk: false });
  }
  return out;
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** MCP configs svc reads for the inventory but does not rewrite (yet): the `mcpServers` shape, or OpenCode's `mcp`. */
function readOnlyMcpTargets(home: string): Array<{ harness: string; file: string; servers: (config: JsonObject) => JsonObject[] }> {
  const mcpServersOf = (config: JsonObject) => (isObject(config.mcpServers) ? [config.mcpServers] : []);
  const vscode = join(home, '.config', 'Code', 'User', 'globalStorage', 'saoudrizwan.claude-dev', 'settings', 'cline_mcp_settings.json');
  return [
    { harness: 'claude-desktop', file: join(home, '.config', 'Claude', 'claude_desktop_config.json'), servers: mcpServersOf },
    { harness: 'claude-desktop', file: join(home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json'), servers: mcpServersOf },
    { harness: 'windsurf', file: join(home, '.codeium', 'windsurf', 'mcp_config.json'), servers: mcpServersOf },
    { harness: 'cline', file: vscode, servers: mcpServersOf },
    { harness: 'continue', file: join(home, '.continue', 'config.json'), servers: mcpServersOf },
    { harness: 'antigravity', file: join(home, '.gemini', 'antigravity', 'mcp_config.json'), servers: mcpServersOf },
    {
      harness: 'opencode',
      file: join(home, '.config', 'opencode', 'opencode.json'),
      // OpenCode: `mcp: { name: { type: "local", command: [...] } | { type: "remote", url } }`, read as the common shape.
      servers: (config) =>
        isObject(config.mcp)
          ? [
              Object.fromEntries(
                Object.entries(config.mcp).map(([name, e]) => {
                  const entry = isObject(e) ? e : {};
                  const command = Array.isArray(entry.command) ? entry.command.filter((c): c is string => typeof c === 'string') : [];
                  return [name, entry.type === 'remote' ? { url: entry.url } : { command: command[0], args: command.slice(1) }];
                }),
              ),
            ]
          : [],
    },
  ];
}

async function mcpServers(home: string, workspace: string): Promise<DeviceReportInput['mcpServers']> {
  const out: DeviceReportInput['mcpServers'] = [];
  for (const target of [...mcpConfigTargets(home, workspace), ...readOnlyMcpTargets(home)]) {
    let config: JsonObject | null;
    try {
      config = await readJsonConfig(target.file);
    } catch {
      continue;
    }
    if (config === null) continue;
    for (const servers of target.servers(config)) {
      for (const [name, entry] of Object.entries(servers)) {
        if (!isObject(entry)) continue;
        const url = typeof entry.url === 'string' ? entry.url : typeof entry.httpUrl === 'string' ? entry.httpUrl : null;
        if (url !== null) {
          out.push({ name, harness: target.harness, transport: entry.type === 'sse' ? 'sse' : 'http', fronted: false, notFrontedReason: 'served over HTTP: front it with svc mcp proxy', url: redactMcpUrl(url) });
          continue;
        }
        const args = Array.isArray(entry.args) ? entry.args.filter((a): a is string => typeof a === 'string') : [];
        const wrapped = args.includes('mcp') && args.includes('wrap');
        const installable = (MCP_HARNESSES as readonly string[]).includes(target.harness);
        const reason = installable ? 'not wrapped: run svc mcp install' : `svc mcp install does not rewrite ${target.harness} configs: put svc mcp wrap in front of it by hand`;
        out.push({ name, harness: target.harness, transport: 'stdio', fronted: wrapped, notFrontedReason: wrapped ? null : reason });
      }
    }
  }
  return out;
}

async function skills(home: string, workspace: string): Promise<DeviceReportInput['skills']> {
  const out: DeviceReportInput['skills'] = [];
  for (const bundle of await skillBundles(home, workspace)) {
    const description = bundle.description === null ? null : await readFile(bundle.description).catch(() => null);
    // The scan `svc skill audit` runs: hard-coded credentials and wildcard file operations, one finding per line and kind.
    let findings = 0;
    for (const file of bundle.files) findings += (await auditFile(file)).findings.length;
    out.push({ name: bundle.name, folder: inHome(home, bundle.folder), sha256: description === null ? null : createHash('sha256').update(description).digest('hex'), scanned: true, findings, files: bundle.files.length });
  }
  return out;
}

/** The SHA-256 of every harness config file svc reads or writes (gate hooks, MCP configs), by harness; paths relative to home. */
export async function captureConfigs(home: string, workspace: string): Promise<NonNullable<DeviceReportInput['configCapture']>> {
  const files = [...gateTargets(home, GATE_HARNESSES).map((t) => ({ harness: t.harness as string, file: t.file })), ...mcpConfigTargets(home, workspace).map((t) => ({ harness: t.harness as string, file: t.file }))];
  const out: NonNullable<DeviceReportInput['configCapture']> = [];
  const seen = new Set<string>();
  for (const { harness, file } of files) {
    if (seen.has(file)) continue;
    seen.add(file);
    const bytes = await readFile(file).catch(() => null);
    if (bytes !== null) out.push({ harness, file: inHome(home, file), sha256: createHash('sha256').update(bytes).digest('hex') });
  }
  return out;
}

/** This machine's inventory, `workspace` being the folder connect runs for. */
export async function collectInventory(opts: {
  home: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
  disconnect?: { harness: string | null; reason: string | null };
  captureConfigs?: boolean;
}): Promise<DeviceReportInput> {
  return {
    configCapture: opts.captureConfigs === true ? await captureConfigs(opts.home, opts.workspace) : null,
    machine: { fingerprint: machineFingerprint(), hostname: hostname(), platform: platform(), cliVersion: VERSION, workspaceFolder: inHome(opts.home, opts.workspace) },
    harnesses: await harnesses(opts.home, opts.env),
    mcpServers: await mcpServers(opts.home, opts.workspace),
    skills: await skills(opts.home, opts.workspace),
    disconnect: opts.disconnect ?? null,
  };
}
