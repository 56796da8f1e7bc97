import { constants } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, open, readdir, readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, normalize, resolve } from 'node:path';
import { z } from 'zod';
import { commandOf, simpleCommands } from '../gate/commands.js';
import { svcHome } from '../lib/paths.js';
import { printable } from '../lib/printable.js';
import { readLocalConfig } from './local-config.js';

/**
 * Pre-images of flagged file changes, for `svc rollback` (seed 002: "rollback of flagged file
 * changes"; limits: 2 MiB per file, 50 retained entries).
 *
 * The hook gate captures the files a tool call is about to change when the gate lets the call run
 * but flags it (the warn tier, see `WARN_EVENTS`) and `.svc/config.json` has
 * `captureRollbackPreImages: true`. Each capture is one entry in `$SVC_HOME/rollback/index.json`;
 * contents are stored once per SHA-256 under `$SVC_HOME/rollback/blobs/`. A file over 2 MiB, a
 * symbolic link or a path that cannot be resolved is recorded as skipped with the reason. Past 50
 * entries the oldest go, with every blob no remaining entry names; their ids are remembered so
 * `--id` can say it was evicted. Index changes take a lock file, so parallel hooks do not lose entries.
 *
 * Restoring an entry writes exactly its recorded path (a temporary file beside it, renamed over
 * it) after capturing what is there now as a new entry, so a restore can be undone. A file that did
 * not exist before the call is restored by deleting it. Nothing is written when the path's folder
 * no longer resolves to the folder it resolved to at capture (a folder swapped for a symbolic
 * link), when the path is now a link or not a regular file, or when the current file cannot be captured.
 */

export const MAX_PRE_IMAGE_BYTES = 2 * 1024 * 1024;
export const MAX_ENTRIES = 50;
/** Evicted ids remembered, to tell an evicted id from an unknown one. */
const MAX_EVICTED = 1000;
/** Files one tool call can have captured. */
const MAX_TARGETS = 20;

/** Gate events that put a call the gate let run on the warn tier. */
export const WARN_EVENTS = ['tool_flagged', 'tool_would_block'] as const;

const ID = /^rb_[0-9a-f]{16}$/;
const SHA256 = /^[0-9a-f]{64}$/;

const triggerSchema = z.strictObject({
  kind: z.enum(['hook', 'restore']),
  tool: z.string().max(256).nullable(),
  harness: z.string().max(64).nullable(),
  sessionId: z.string().max(256).nullable(),
  /** Why the call was on the warn tier (`tool_flagged: pii.email`), or which entry a restore restored. */
  reasons: z.array(z.string().max(1000)).max(20),
});

const entrySchema = z.discriminatedUnion('state', [
  z.strictObject({ state: z.literal('captured'), id: z.string().regex(ID), at: z.string(), path: z.string(), realDir: z.string(), sha256: z.string().regex(SHA256), size: z.number().int().min(0), mode: z.number().int().min(0).max(0o7777), trigger: triggerSchema }),
  /** The file did not exist: restoring deletes it. */
  z.strictObject({ state: z.literal('absent'), id: z.string().regex(ID), at: z.string(), path: z.string(), realDir: z.string(), trigger: triggerSchema }),
  z.strictObject({ state: z.literal('skipped'), id: z.string().regex(ID), at: z.string(), path: z.string(), reason: z.string(), trigger: triggerSchema }),
]);
export type RollbackEntry = z.infer<typeof entrySchema>;
export type RollbackTrigger = z.infer<typeof triggerSchema>;

const indexSchema = z.strictObject({
  version: z.literal(1),
  /** Oldest first. */
  entries: z.array(entrySchema),
  evicted: z.array(z.string()).default([]),
});
type Index = z.infer<typeof indexSchema>;

export class RollbackError extends Error {}

export function rollbackDir(env: NodeJS.ProcessEnv): string {
  return join(svcHome(env), 'rollback');
}

const indexPath = (dir: string) => join(dir, 'index.json');
const blobPath = (dir: string, sha256: string) => join(dir, 'blobs', sha256);
const newId = () => `rb_${randomBytes(8).toString('hex')}`;

async function readIndex(dir: string): Promise<Index> {
  let text: string;
  try {
    text = await readFile(indexPath(dir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, entries: [], evicted: [] };
    throw err;
  }
  let parsed;
  try {
    parsed = indexSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = null;
  }
  if (parsed === null || !parsed.success) throw new RollbackError(`${indexPath(dir)} does not read; move it aside to start a new one`);
  return parsed.data;
}

async function writeAtomically(file: string, data: string | Buffer, mode: number): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, data, { mode, flag: 'wx' });
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}

const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 8_000;

/** Runs `work` holding `$SVC_HOME/rollback/lock` (a lock left by a crashed process goes stale after 30 s). */
async function locked<T>(dir: string, work: () => Promise<T>): Promise<T> {
  await mkdir(join(dir, 'blobs'), { recursive: true, mode: 0o700 });
  const lock = join(dir, 'lock');
  const giveUp = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > LOCK_STALE_MS) await unlink(lock).catch(() => undefined);
      else if (Date.now() > giveUp) throw new RollbackError(`${lock} is held by another svc process`);
      else await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
    }
  }
  try {
    return await work();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

/** The real path `path`'s folder resolves to: the nearest existing ancestor's real path, plus the rest. */
async function resolvedFolder(path: string): Promise<string> {
  let dir = dirname(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(await realpath(dir), ...rest.reverse());
    } catch {
      const up = dirname(dir);
      if (up === dir) return dirname(path);
      rest.push(basename(dir));
      dir = up;
    }
  }
}

/** Why `path` cannot be a recorded path (absolute, normalised, no NUL), or null. */
function unsafePath(path: string): string | null {
  if (path.includes('\u0000')) return 'the path holds a NUL character';
  if (!isAbsolute(path) || normalize(path) !== path) return 'the path is not absolute and normalised';
  return null;
}

/** Reads a regular file without following a link at its last component, bounded at the pre-image limit. */
async function readBounded(path: string): Promise<{ bytes: Buffer; mode: number } | { skipped: string }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { skipped: 'not a regular file' };
    if (info.size > MAX_PRE_IMAGE_BYTES) return { skipped: `over 2 MiB (${info.size} bytes): not captured` };
    const buffer = Buffer.alloc(MAX_PRE_IMAGE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_PRE_IMAGE_BYTES) return { skipped: 'over 2 MiB (it grew while it was read): not captured' };
    }
    return { bytes: buffer.subarray(0, length), mode: info.mode & 0o7777 };
  } finally {
    await handle.close();
  }
}

/** What `path` holds now, as an entry (its blob written when captured). Call inside the lock. */
async function snapshot(dir: string, path: string, trigger: RollbackTrigger): Promise<RollbackEntry> {
  const base = { id: newId(), at: new Date().toISOString(), path, trigger };
  const unsafe = unsafePath(path);
  if (unsafe !== null) return { ...base, state: 'skipped', reason: unsafe };
  let info;
  try {
    info = await lstat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ...base, state: 'absent', realDir: await resolvedFolder(path) };
    return { ...base, state: 'skipped', reason: `it cannot be read (${code ?? (err as Error).message})` };
  }
  if (info.isSymbolicLink()) return { ...base, state: 'skipped', reason: 'a symbolic link: not followed' };
  if (!info.isFile()) return { ...base, state: 'skipped', reason: 'not a regular file' };
  if (info.size > MAX_PRE_IMAGE_BYTES) return { ...base, state: 'skipped', reason: `over 2 MiB (${info.size} bytes): not captured` };
  let read;
  try {
    read = await readBounded(path);
  } catch (err) {
    return { ...base, state: 'skipped', reason: `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  if ('skipped' in read) return { ...base, state: 'skipped', reason: read.skipped };
  const sha256 = createHash('sha256').update(read.bytes).digest('hex');
  const blob = blobPath(dir, sha256);
  if (!(await stat(blob).then(() => true, () => false))) await writeAtomically(blob, read.bytes, 0o600);
  return { ...base, state: 'captured', realDir: await realpath(dirname(path)), sha256, size: read.bytes.length, mode: read.mode };
}

/** Adds entries, evicts past MAX_ENTRIES and removes every blob no entry names; writes the index. */
async function commit(dir: string, index: Index, added: readonly RollbackEntry[]): Promise<void> {
  const entries = [...index.entries, ...added];
  const evicted = entries.splice(0, Math.max(0, entries.length - MAX_ENTRIES));
  const next: Index = { version: 1, entries, evicted: [...index.evicted, ...evicted.map((e) => e.id)].slice(-MAX_EVICTED) };
  await writeAtomically(indexPath(dir), `${JSON.stringify(next, null, 1)}\n`, 0o600);
  const kept = new Set(entries.flatMap((e) => (e.state === 'captured' ? [e.sha256] : [])));
  for (const name of await readdir(join(dir, 'blobs')).catch(() => [] as string[])) {
    if (SHA256.test(name) && !kept.has(name)) await unlink(blobPath(dir, name)).catch(() => undefined);
  }
}

/** Captures the pre-images of the targets' paths (absolute) as one entry each; unresolved targets are recorded as skipped. */
export async function capturePreImages(targets: ChangeTargets, trigger: RollbackTrigger, env: NodeJS.ProcessEnv): Promise<RollbackEntry[]> {
  const dir = rollbackDir(env);
  return locked(dir, async () => {
    const index = await readIndex(dir);
    const added: RollbackEntry[] = [];
    for (const path of [...new Set(targets.paths)].slice(0, MAX_TARGETS)) added.push(await snapshot(dir, path, trigger));
    const at = new Date().toISOString();
    for (const t of targets.unresolved.slice(0, MAX_TARGETS)) added.push({ state: 'skipped', id: newId(), at, path: t.target, reason: t.reason, trigger });
    await commit(dir, index, added);
    return added;
  });
}

/** The retained entries, newest first. */
export async function listEntries(env: NodeJS.ProcessEnv): Promise<RollbackEntry[]> {
  return (await readIndex(rollbackDir(env))).entries.slice().reverse();
}

export interface Restored {
  readonly entry: RollbackEntry;
  /** What was there before the restore, captured: restore this entry to undo it. */
  readonly undo: RollbackEntry;
  readonly action: 'written' | 'deleted' | 'already absent';
}

/** Restores exactly one entry's pre-image to its recorded path (see the module comment). */
export async function restoreEntry(id: string, env: NodeJS.ProcessEnv, by: Omit<RollbackTrigger, 'kind' | 'reasons'> = { tool: null, harness: null, sessionId: null }): Promise<Restored> {
  if (!ID.test(id)) throw new RollbackError(`'${printable(id)}' is not a rollback id (rb_ and 16 hex digits)`);
  const dir = rollbackDir(env);
  return locked(dir, async () => {
    const index = await readIndex(dir);
    const entry = index.entries.find((e) => e.id === id);
    if (entry === undefined) {
      if (index.evicted.includes(id)) throw new RollbackError(`${id} was evicted: only the newest ${MAX_ENTRIES} pre-images are kept`);
      throw new RollbackError(`no rollback entry ${id}: svc rollback lists them`);
    }
    const shown = printable(entry.path);
    if (entry.state === 'skipped') throw new RollbackError(`${id} has no pre-image of ${shown}: ${entry.reason}`);
    const unsafe = unsafePath(entry.path);
    if (unsafe !== null) throw new RollbackError(`${id} cannot be restored: ${unsafe}`);
    let content: Buffer | null = null;
    if (entry.state === 'captured') {
      content = await readFile(blobPath(dir, entry.sha256)).catch(() => null);
      if (content === null) throw new RollbackError(`${id}: its pre-image was evicted or removed from ${join(dir, 'blobs')}`);
      if (createHash('sha256').update(content).digest('hex') !== entry.sha256) throw new RollbackError(`${id}: its stored pre-image is damaged (SHA-256 mismatch); nothing was written`);
    }
    const folder = dirname(entry.path);
    const real = await realpath(folder).catch(() => null);
    if (real === null) {
      if (entry.state === 'absent') return finish(dir, index, entry, by, 'already absent');
      throw new RollbackError(`${printable(folder)} no longer exists; nothing was written`);
    }
    if (real !== entry.realDir) throw new RollbackError(`${printable(folder)} now resolves to ${printable(real)}, not ${printable(entry.realDir)} as when it was captured; nothing was written`);
    const now = await lstat(entry.path).catch(() => null);
    if (now !== null && !now.isFile()) throw new RollbackError(`${shown} is now ${now.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; nothing was written`);
    if (entry.state === 'absent') {
      if (now === null) return finish(dir, index, entry, by, 'already absent');
      return finish(dir, index, entry, by, 'deleted', () => unlink(entry.path));
    }
    return finish(dir, index, entry, by, 'written', () => writeAtomically(entry.path, content!, entry.mode));
  });
}

/** Captures the current file, applies the change (if any) and records the capture. Inside the lock. */
async function finish(dir: string, index: Index, entry: RollbackEntry, by: Omit<RollbackTrigger, 'kind' | 'reasons'>, action: Restored['action'], apply?: () => Promise<void>): Promise<Restored> {
  const undo = await snapshot(dir, entry.path, { kind: 'restore', ...by, reasons: [`before restoring ${entry.id}`] });
  if (undo.state === 'skipped') throw new RollbackError(`the current ${printable(entry.path)} cannot be captured first (${undo.reason}); nothing was written`);
  await commit(dir, index, [undo]);
  if (apply !== undefined) await apply();
  return { entry, undo, action };
}

// --- which files a tool call changes -----------------------------------------------------------

const FILE_TOOLS = /^(?:write|edit|multiedit|notebookedit|write_file|replace|edit_file|create_file|str_replace_editor|str_replace_based_edit_tool)$/i;
const PATCH_TOOLS = /^(?:apply_patch|applypatch)$/i;
const SHELL_TOOLS = /^(?:bash|shell|run_shell_command|exec_command|local_shell|terminal|run_terminal_cmd)$/i;

/** `> file`, `>> file`, `&> file`, `>| file` (not `2>&1`, not `<`). */
const REDIRECT = /(?:^|[^<>&\w])(?:\d|&)?>{1,2}\|?\s*("[^"\n]*"|'[^'\n]*'|[^\s;&|<>()`'"]+)/g;

export interface ChangeTargets {
  readonly paths: string[];
  /** Targets named that cannot be resolved to one file (`> $OUT`), with the reason. */
  readonly unresolved: Array<{ target: string; reason: string }>;
}

function strings(input: unknown, keys: readonly string[]): string[] {
  if (typeof input !== 'object' || input === null) return [];
  return keys.map((k) => (input as Record<string, unknown>)[k]).filter((v): v is string => typeof v === 'string' && v !== '');
}

/** The files a tool call would change: file tools' paths, apply_patch's files, a shell command's redirections and tee. */
export function changeTargets(toolName: string, toolInput: unknown, cwd: string, home: string): ChangeTargets {
  const named: string[] = [];
  const unresolved: ChangeTargets['unresolved'] = [];
  if (FILE_TOOLS.test(toolName)) named.push(...strings(toolInput, ['file_path', 'notebook_path', 'path', 'target_file']));
  else if (PATCH_TOOLS.test(toolName)) {
    const patch = typeof toolInput === 'string' ? toolInput : (strings(toolInput, ['input', 'patch'])[0] ?? commandOf(toolInput) ?? '');
    for (const m of patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm)) named.push((m[1] ?? m[2]!).trim());
  } else if (SHELL_TOOLS.test(toolName)) {
    const command = commandOf(toolInput) ?? '';
    const shellTargets: string[] = [];
    for (const m of command.matchAll(REDIRECT)) shellTargets.push(m[1]!.replace(/^(["'])(.*)\1$/, '$2'));
    for (const words of simpleCommands(command)) if (words[0] === 'tee') shellTargets.push(...words.slice(1).filter((w) => !w.startsWith('-')));
    const movesAround = simpleCommands(command).some((w) => w[0] === 'cd' || w[0] === 'pushd');
    for (const target of shellTargets) {
      if (target.startsWith('/dev/')) continue;
      if (/[$`*?[{]/.test(target) || (target.startsWith('~') && !target.startsWith('~/'))) unresolved.push({ target, reason: 'the shell expands it; it cannot be resolved before the command runs' });
      else if (movesAround && !isAbsolute(target) && !target.startsWith('~/')) unresolved.push({ target, reason: 'the command changes folder first' });
      else named.push(target.startsWith('~/') ? join(home, target.slice(2)) : target);
    }
  }
  const paths = named.map((p) => (p.includes('\u0000') ? p : resolve(cwd, p)));
  return { paths: [...new Set(paths)], unresolved };
}

/** Why a call is on the warn tier (from the gate's events for it), or none. */
export function warnReasons(events: ReadonlyArray<{ type: string; rule?: string | null; code?: string | null; reason?: string | null; flagged?: unknown }>): string[] {
  return events
    .filter((e) => (WARN_EVENTS as readonly string[]).includes(e.type))
    .map((e) => {
      const flagged = Array.isArray(e.flagged) ? e.flagged.join(', ') : null;
      return `${e.type}: ${flagged ?? e.rule ?? e.code ?? 'flagged'}${e.reason ? ` (${e.reason})` : ''}`.slice(0, 1000);
    });
}

export interface FlaggedCall {
  readonly harness: string;
  readonly toolName: string;
  readonly toolInput: unknown;
  /** The folder the harness runs the call in (its `.svc/config.json` decides whether to capture). */
  readonly cwd: string;
  readonly sessionId: string | null;
}

/**
 * The hook gate's part: when the gate let `call` run but its events put it on the warn tier, and
 * the local config asks for it, the files the call is about to change are captured. Never throws;
 * answers a note for the harness when the local config does not read (nothing is captured then).
 */
export async function captureFlaggedCall(call: FlaggedCall, events: Parameters<typeof warnReasons>[0], env: NodeJS.ProcessEnv): Promise<string | null> {
  const reasons = warnReasons(events);
  if (reasons.length === 0) return null;
  const targets = changeTargets(call.toolName, call.toolInput, call.cwd, homedir());
  if (targets.paths.length === 0 && targets.unresolved.length === 0) return null;
  try {
    if (!(await readLocalConfig(call.cwd, env)).captureRollbackPreImages) return null;
    await capturePreImages(targets, { kind: 'hook', tool: call.toolName, harness: call.harness, sessionId: call.sessionId, reasons }, env);
    return null;
  } catch (err) {
    return `svc: no rollback pre-image was captured: ${(err as Error).message}`;
  }
}
