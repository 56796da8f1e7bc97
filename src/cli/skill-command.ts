import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import type { Command } from 'commander';
import { printable } from '../lib/printable.js';
import { auditFile, deleteLines, type Finding, type ScannedFile } from '../machine/skill-audit.js';
import { localRuleFiles, skillBundles } from '../machine/skill-files.js';
import { describeFailure, linkedApi } from './control-plane-link.js';

/**
 * `svc skill list` and `svc skill audit` (seed 002): the local skill bundles (`.agents/skills` and
 * `.claude/skills` of the current folder, `~/.claude/skills`) and rule files (WASM rules in
 * SVC_WASM_DIR or ~/.svc/wasm, SOP files under `.svc/sops/`), and their audit for hard-coded
 * credentials and wildcard file operations.
 *
 * `audit` exits 1 while findings remain, 0 when there are none (or all were deleted).
 * `--delete` removes each flagged line from its file (seed 001: enableLocalSkillAuditDelete) and
 * only when that workspace setting is on, as the control plane says; offline it refuses. It asks
 * first on a terminal; without one it needs `--yes`. Binary files (WASM rules) are never edited.
 */

interface Target {
  readonly file: string;
  /** The folder it was found in: deletion never touches a file outside it. */
  readonly folder: string;
  readonly kind: 'skill' | 'wasm' | 'sop';
}

async function targets(env: NodeJS.ProcessEnv): Promise<{ bundles: Awaited<ReturnType<typeof skillBundles>>; files: Target[] }> {
  const workspace = process.cwd();
  const bundles = await skillBundles(env.HOME || homedir(), workspace);
  const files: Target[] = bundles.flatMap((b) => b.files.map((file) => ({ file, folder: b.dir, kind: 'skill' as const })));
  for (const r of await localRuleFiles(workspace, env)) files.push({ file: r.path, folder: r.folder, kind: r.kind });
  return { bundles, files };
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

async function sha256Of(file: string): Promise<string | null> {
  return readFile(file).then(
    (b) => createHash('sha256').update(b).digest('hex'),
    () => null,
  );
}

async function list(opts: { json: boolean }): Promise<void> {
  const { bundles, files } = await targets(process.env);
  const skills = await Promise.all(bundles.map(async (b) => ({ name: b.name, folder: b.folder, dir: b.dir, description: b.description, sha256: b.description === null ? null : await sha256Of(b.description), files: b.files })));
  const rules = await Promise.all(files.filter((f) => f.kind !== 'skill').map(async (f) => ({ kind: f.kind, path: f.file, size: (await stat(f.file).catch(() => null))?.size ?? null })));
  if (opts.json) {
    process.stdout.write(json({ skills, rules }));
    return;
  }
  const lines = ['skill bundles'];
  if (skills.length === 0) lines.push('  none');
  for (const s of skills) lines.push(`  ${printable(s.dir)}  ${s.files.length} file${s.files.length === 1 ? '' : 's'}, ${s.sha256 === null ? 'no SKILL.md' : `SKILL.md ${s.sha256.slice(0, 12)}`}`);
  lines.push('rule files');
  if (rules.length === 0) lines.push('  none');
  for (const r of rules) lines.push(`  ${r.kind.padEnd(4)}  ${printable(r.path)}${r.size === null ? '' : `  ${r.size} bytes`}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Whether the workspace lets `skill audit --delete` delete, or why it cannot be told. */
async function deletionAllowed(env: NodeJS.ProcessEnv): Promise<{ ok: true } | { ok: false; reason: string }> {
  try {
    const body = await linkedApi(env).api.json<{ workspaceId: string; settings: Record<string, unknown> }>('GET', '/workspace/settings', undefined, { timeoutMs: 5000 });
    if (body.settings.enableLocalSkillAuditDelete === true) return { ok: true };
    return { ok: false, reason: `the workspace setting enableLocalSkillAuditDelete is off in workspace ${body.workspaceId} (svc settings set enableLocalSkillAuditDelete true, OWNER or ADMIN)` };
  } catch (err) {
    return { ok: false, reason: `deletion needs the workspace setting enableLocalSkillAuditDelete, which could not be read: ${describeFailure(err)}` };
  }
}

async function confirmed(yes: boolean, count: number, files: number): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (yes) return { ok: true };
  if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) return { ok: false, reason: 'not a terminal: add --yes to delete without being asked' };
  const { confirm } = await import('@inquirer/prompts');
  const ok = await confirm({ message: `Delete ${count} flagged line${count === 1 ? '' : 's'} from ${files} file${files === 1 ? '' : 's'}?`, default: false });
  return ok ? { ok: true } : { ok: false, reason: 'not confirmed' };
}

interface Deletion {
  readonly file: string;
  readonly lines: number[];
  readonly deleted: boolean;
  readonly reason?: string;
}

async function audit(opts: { json: boolean; delete: boolean; yes: boolean }): Promise<void> {
  const env = process.env;
  const { files } = await targets(env);
  const scanned: Array<ScannedFile & { target: Target }> = [];
  for (const target of files) scanned.push({ ...(await auditFile(target.file)), target });
  const findings: Finding[] = scanned.flatMap((s) => s.findings);
  let refused: string | null = null;
  const deletions: Deletion[] = [];
  if (opts.delete && findings.length > 0) {
    const deletable = scanned.filter((s) => s.findings.length > 0);
    const allowed = await deletionAllowed(env);
    const asked = allowed.ok ? await confirmed(opts.yes, findings.length, deletable.length) : allowed;
    if (!asked.ok) refused = asked.reason;
    else {
      for (const s of deletable) {
        const lines = [...new Set(s.findings.flatMap((f) => (f.line === null ? [] : [f.line])))].sort((a, b) => a - b);
        if (s.binary || s.target.kind === 'wasm' || lines.length === 0 || s.sha256 === null) {
          deletions.push({ file: s.file, lines, deleted: false, reason: 'a binary rule file is not edited: remove or rebuild it' });
          continue;
        }
        try {
          await deleteLines(s.file, s.target.folder, new Set(lines), s.sha256);
          deletions.push({ file: s.file, lines, deleted: true });
        } catch (err) {
          deletions.push({ file: s.file, lines, deleted: false, reason: (err as Error).message });
        }
      }
    }
  }
  const deletedFiles = new Set(deletions.filter((d) => d.deleted).map((d) => d.file));
  const remaining = findings.filter((f) => !deletedFiles.has(f.file));
  const skipped = scanned.filter((s) => s.skipped !== undefined).map((s) => ({ file: s.file, reason: s.skipped! }));
  if (opts.json) {
    process.stdout.write(json({ scanned: scanned.length, findings, skipped, ...(opts.delete ? { deletions, refused } : {}), remaining: remaining.length }));
  } else {
    const lines = findings.map((f) => `${printable(f.file)}:${f.line ?? `offset ${f.offset}`}: ${f.kind} (${printable(f.detail)}): ${f.excerpt}`);
    for (const s of skipped) lines.push(`${printable(s.file)}: not scanned: ${s.reason}`);
    for (const d of deletions) lines.push(d.deleted ? `${printable(d.file)}: deleted line${d.lines.length === 1 ? '' : 's'} ${d.lines.join(', ')}` : `${printable(d.file)}: not deleted: ${d.reason}`);
    lines.push(`${findings.length} finding${findings.length === 1 ? '' : 's'} in ${new Set(findings.map((f) => f.file)).size} of ${scanned.length} files${deletedFiles.size > 0 ? `; ${remaining.length} remain` : ''}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  if (refused !== null) process.stderr.write(`svc skill audit: nothing deleted: ${refused}\n`);
  if (remaining.length > 0) process.exitCode = 1;
}

export function registerSkillCommands(program: Command, fail: (err: unknown) => never): void {
  const skill = program.command('skill').description('local skill bundles and rule files');
  skill
    .command('list')
    .description('skill bundles (.agents/skills, .claude/skills, ~/.claude/skills) and rule files (WASM rules, .svc/sops)')
    .option('--json', 'as JSON', false)
    .action((opts: { json: boolean }) => list(opts).catch(fail));
  skill
    .command('audit')
    .description('find hard-coded credentials and wildcard file operations; exit 1 while any remain')
    .option('--json', 'as JSON', false)
    .option('--delete', 'delete each flagged line from its file (needs the workspace setting enableLocalSkillAuditDelete)', false)
    .option('--yes', 'delete without asking (needed without a terminal)', false)
    .action((opts: { json: boolean; delete: boolean; yes: boolean }) => audit(opts).catch(fail));
}
