import { createHash, randomBytes } from 'node:crypto';
import { readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import RE2 from 're2';
import { simpleCommands } from '../gate/commands.js';
import { printable } from '../lib/printable.js';
import { trailingRunStart } from '../lib/trailing-run.js';
import { redactText, secretSpans } from '../policy/redact-arguments.js';

/**
 * The audit of local skill and rule files (`svc skill audit`): hard-coded credentials and wildcard
 * file operations, line by line.
 *
 * - Credentials are the secret shapes the rest of svc redacts (`secretSpans`: provider and cloud
 *   keys, JWTs, PEM private keys, bearer and basic credentials, a URL's password, `password=…`-style
 *   assignments), minus what only stands for a secret: an environment or template reference
 *   (`$TOKEN`, `${{ secrets.X }}`, `process.env.X`, `os.environ[…]`), a placeholder (`<your-key>`,
 *   `sk-xxxxxxxx…`, `…EXAMPLE`), a variable's or type's name, and an unquoted plain lower-case word
 *   after `password:` in prose. Card numbers and other personal data are not credentials.
 * - Wildcard file operations are commands whose target is everything: a recursive delete, chmod or
 *   chown of `*`, `/`, `~`, `$HOME`, a drive root, a `**` glob or an unguarded `$VAR/` (`${VAR:?}` is
 *   guarded); `find <root>` deleting with no filter; shred or truncate of such targets; `sed -i` or
 *   `perl -pi` over `**` globs; PowerShell `Remove-Item -Recurse` and cmd `del /s`, `rd /s` on them;
 *   and the library calls that do the same (`shutil.rmtree`, `fs.rm`, `rimraf`, `del`, `fs-extra`)
 *   on a root, the home or working folder, an environment variable or a lone variable.
 *
 * Each line goes through one RE2 prefilter (linear time) and is tokenised once only when it names
 * one of those commands; binary files (WASM rules) are searched for credentials in their
 * printable strings. Excerpts are the redacted line: a secret is never printed.
 */

export type FindingKind = 'credential' | 'wildcard_file_operation';

export interface Finding {
  readonly file: string;
  /** 1-based; null in a binary file (see offset). */
  readonly line: number | null;
  /** Byte offset of the string in a binary file. */
  readonly offset?: number;
  readonly kind: FindingKind;
  /** The credential's kind (api_key, private_key, secret, …) or the operation (`rm -r on *`). */
  readonly detail: string;
  /** The line with every secret redacted, control characters escaped, at most 200 characters. */
  readonly excerpt: string;
}

/** Files larger than this are listed but not scanned. */
export const MAX_SCANNED_BYTES = 1024 * 1024;
const EXCERPT_CHARS = 200;

// --- credentials -------------------------------------------------------------------------------

const REFERENCE = /^(?:\$|%[A-Za-z_]|<|\{\{|@\{)|process\.env|os\.environ|getenv|\bENV\[|secrets\.|\bvault:/i;
const PLACEHOLDER = /your|example|placeholder|changeme|change_me|dummy|sample|redacted|fake|xxxx|\*{3}|\.{3}|…/i;
const REPEATED = /(.)\1{5,}/;
const ENV_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;
const LITERAL_WORD = /^(?:true|false|null|none|nil|undefined|string|str|number|int|bool|boolean|any|object|bytes|pass|password|passwd|secret|token|pwd|required|optional)$/i;
const CODE_EXPRESSION = /[()[\]]|^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/;

function standsForASecret(kind: string, raw: string): boolean {
  const quoted = /^(["'`]).*\1$/s.test(raw);
  const value = quoted ? raw.slice(1, -1) : raw;
  if (value.trim() === '') return true;
  if (REFERENCE.test(value) || PLACEHOLDER.test(value) || REPEATED.test(value) || LITERAL_WORD.test(value)) return true;
  if (kind === 'secret' || kind === 'url_password') {
    if (ENV_NAME.test(value)) return true;
    if (!quoted && CODE_EXPRESSION.test(value)) return true;
    // `Password: required`, `token: see below`: prose, not a value.
    if (!quoted && /^[a-z]+$/.test(value)) return true;
  }
  return false;
}

/** The credentials in one line of text: kind and span, overlaps removed. */
function credentialsIn(text: string): Array<{ kind: string; start: number; end: number }> {
  const spans = secretSpans(text)
    .filter((s) => !s.kind.startsWith('pii.') && !standsForASecret(s.kind, text.slice(s.start, s.end)))
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const out: typeof spans = [];
  let at = 0;
  for (const s of spans) {
    if (s.start < at) continue;
    out.push(s);
    at = s.end;
  }
  return out;
}

// --- wildcard file operations ------------------------------------------------------------------

/** Lines naming none of these need no tokenising. */
const COMMAND_WORDS = new RE2(
  String.raw`\b(?:rm|srm|rmdir|rd|del|erase|ri|remove-item|chmod|chown|chgrp|find|shred|truncate|sed|perl|rmtree|rimraf|rmSync|rmdirSync|emptyDir|emptyDirSync|removeSync|deleteSync|deleteAsync)\b|\b(?:fs|fsp|fse|fsPromises|promises)\.(?:rm|rmdir|remove)\b|\bdel\s*\(`,
  'i',
);

/** A library call that deletes a tree, and the text of its first argument. */
const DELETE_CALL = new RE2(
  String.raw`\b(shutil\.rmtree|rmtree|rimraf(?:\.sync|Sync)?|(?:fs|fsp|fse|fsPromises|promises)\.(?:rm|rmSync|rmdir|rmdirSync|remove|removeSync|emptyDir|emptyDirSync)|deleteSync|deleteAsync|del)\s*\(\s*([^\n]{0,200})`,
  'g',
);

const ROOT_EXPRESSION =
  /^(?:os\.path\.expanduser\(\s*(["'])~\/?\1\s*\)|(?:pathlib\.)?Path\.(?:home|cwd)\(\)|Path\(\s*(["'])(?:\/|~|\.)\2\s*\)|(?:os\.)?homedir\(\)|os\.getcwd\(\)|process\.cwd\(\)|os\.environ|os\.getenv\(|process\.env\b)/;

const DRIVE_ROOT = /^(?:[A-Za-z]:)?[\\/]*\*?(?:\.\*)?$/;
const RECURSIVE_GLOB = /^(?:\.\/)?\*\*(?:\/\*(?:\.\*)?)?$/;

/** Why `arg` (quotes already removed) stands for everything, or null. `dot`: `.` counts too. */
function wildcardTarget(arg: string, dot: boolean): string | null {
  const a = arg.trim();
  if (a === '') return null;
  if (a === '*' || a === '.*' || a === './*' || a === '*.*' || a === './.*' || a === '.\\*') return 'every file here';
  if (RECURSIVE_GLOB.test(a)) return 'a ** glob';
  if (a === '/' || /^\/+(?:\*|\.\*|\*\*(?:\/\*)?)?$/.test(a)) return 'the root folder';
  if (/^[A-Za-z]:/.test(a) || a.startsWith('\\')) return DRIVE_ROOT.test(a) ? 'a drive root' : null;
  if (/^~\/?(?:\*|\.\*|\*\*(?:\/\*)?)?$/.test(a)) return 'the home folder';
  if (/^(?:\$HOME|\$env:(?:USERPROFILE|HOME|HOMEPATH)|%USERPROFILE%|%HOMEPATH%)[\\/]?(?:\*|\.\*)?$/i.test(a)) return 'the home folder';
  if (/^\.\.\/?(?:\*|\.\*)?$/.test(a)) return 'the parent folder';
  if (dot && (a === '.' || a === './')) return 'this folder';
  // `$VAR/`, `$VAR/*`: the root when VAR is empty or unset. `${VAR:?}` stops the command instead.
  if (/^\$[A-Za-z_][A-Za-z0-9_]*\/(?:\*|\.\*|\*\*(?:\/\*)?)?$/.test(a)) return 'an unguarded $VAR/ root';
  return null;
}

/**
 * An octal mode with the others-write bit, or a symbolic one giving write to others or all. The
 * lookahead asks for an `o` or `a` among the classes: `[ugoa]*[oa][ugoa]*` split a long run of them
 * every way, in quadratic time.
 */
const WORLD_WRITABLE = /^[0-7]*[2367]$|(?:^|,)(?=[ugoa]*[oa])[ugoa]*[+=][rwxXst]*w|(?:^|,)[+=][rwxXst]*w/;

const DELETERS = new Set(['rm', 'srm', 'rmdir', 'rd', 'del', 'erase', 'ri', 'remove-item']);
const CMD_SWITCH = /^\/[a-z]$/i;
const FIND_FILTERS = new Set(['-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-newer', '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin', '-size', '-user', '-group', '-uid', '-gid', '-empty', '-perm', '-links', '-inum', '-samefile', '-lname', '-ilname']);

/** Whether a flag word asks a delete for recursion: `-rf`, `-R`, `--recursive`, PowerShell `-Recurse`, cmd `/s`. */
function recursiveFlag(word: string, program: string): boolean {
  const w = word.toLowerCase();
  if (w === '--recursive' || w.startsWith('-rec')) return true;
  if (/^\/s$/i.test(word) && ['rd', 'rmdir', 'del', 'erase'].includes(program)) return true;
  // A short-option cluster (`-rf`, `-fR`, `-rfv`); a longer word is a named PowerShell parameter.
  return /^-[a-zA-Z]{1,4}$/.test(word) && /[rR]/.test(word);
}

const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * A word without the brackets and commas of a list around it (PowerShell's `[…]`, `a,b`), trimmed
 * by hand: `[\],]+$` is tried at every position of a run of them.
 */
function withoutListBrackets(word: string): string {
  let start = 0;
  while (start < word.length && (word[start] === '[' || word[start] === ',')) start++;
  return word.slice(start, trailingRunStart(word, (unit) => unit === CLOSE_BRACKET || unit === COMMA, word.length, start));
}

/** The wildcard operation one simple command performs, or null. */
function wildcardCommand(raw: readonly string[]): string | null {
  const words = raw.map(withoutListBrackets).filter((w) => w !== '');
  if (words.length < 2) return null;
  const program = words[0]!.toLowerCase();
  const args = words.slice(1);
  if (DELETERS.has(program)) {
    const cmd = ['rd', 'rmdir', 'del', 'erase'].includes(program);
    const recursive = args.some((w) => (w.startsWith('-') || (cmd && CMD_SWITCH.test(w))) && recursiveFlag(w, program));
    for (const arg of args) {
      if (arg.startsWith('-') || (cmd && CMD_SWITCH.test(arg))) continue;
      const target = wildcardTarget(arg, false);
      if (target !== null && (recursive || RECURSIVE_GLOB.test(arg))) return `${program}${recursive ? ' (recursive)' : ''} on ${arg}: ${target}`;
    }
    return null;
  }
  if (program === 'chmod' || program === 'chown' || program === 'chgrp') {
    // chmod's recursion is -R only (`-r` takes away read permission).
    if (!args.some((w) => w === '--recursive' || /^-[a-zA-Z]*R[a-zA-Z]*$/.test(w))) return null;
    const [mode, ...targets] = args.filter((w) => !w.startsWith('-'));
    // `.` counts only for a chmod that lets everyone write (`chown -R node:node .` is routine).
    const dot = program === 'chmod' && mode !== undefined && WORLD_WRITABLE.test(mode);
    for (const arg of targets) {
      const target = wildcardTarget(arg, dot);
      if (target !== null) return `${program} -R on ${arg}: ${target}`;
    }
    return null;
  }
  if (program === 'find') {
    const roots: string[] = [];
    let i = 0;
    for (; i < args.length && !args[i]!.startsWith('-') && args[i] !== '!' && args[i] !== '\\'; i++) roots.push(args[i]!);
    const rest = args.slice(i).map((w) => w.toLowerCase());
    const deletes = rest.includes('-delete') || rest.some((w, k) => (w === '-exec' || w === '-execdir' || w === '-ok') && ['rm', 'shred', 'unlink', 'truncate', 'srm'].includes((rest[k + 1] ?? '').replace(/^.*\//, '')));
    if (!deletes || rest.some((w) => FIND_FILTERS.has(w))) return null;
    const root = roots.find((r) => wildcardTarget(r, true) !== null);
    return root === undefined ? null : `find ${root} deleting with no filter: ${wildcardTarget(root, true)}`;
  }
  if (program === 'shred' || program === 'truncate') {
    const arg = args.find((w) => !w.startsWith('-') && wildcardTarget(w, false) !== null);
    return arg === undefined ? null : `${program} on ${arg}: ${wildcardTarget(arg, false)}`;
  }
  if (program === 'sed' || program === 'perl') {
    if (!args.some((w) => /^-[a-zA-Z]*i/.test(w) || w.startsWith('--in-place'))) return null;
    const arg = args.find((w) => RECURSIVE_GLOB.test(w));
    return arg === undefined ? null : `${program} in place on ${arg}: a ** glob`;
  }
  return null;
}

/** The wildcard library call in a line, or null. */
function wildcardCall(line: string): string | null {
  DELETE_CALL.lastIndex = 0;
  for (let m = DELETE_CALL.exec(line); m !== null; m = DELETE_CALL.exec(line)) {
    const call = m[1]!;
    const arg = m[2]!.replace(/^\[\s*/, '');
    const literal = /^(["'`])(.*?)\1/.exec(arg);
    if (literal !== null) {
      const target = wildcardTarget(literal[2]!, true);
      if (target !== null) return `${call} on ${literal[2]}: ${target}`;
      continue;
    }
    // An f-string or template that is one variable (and a slash): whatever the variable holds, root included.
    if (/^f?(["'])\{[^}]*\}\/?\1|^`\$\{[^}]*\}\/?`/.test(arg)) return `${call} on a lone variable: an unguarded root`;
    const root = ROOT_EXPRESSION.exec(arg);
    if (root !== null) return `${call} on ${root[0].replace(/\($/, '(…)')}: a root, the home or working folder, or an environment variable`;
  }
  return null;
}

/** The wildcard file operations one line performs. */
export function wildcardOperations(line: string): string[] {
  if (!COMMAND_WORDS.test(line)) return [];
  const out: string[] = [];
  for (const words of simpleCommands(line)) {
    // `git rm`, `docker run --rm`: not a delete of the file system.
    const found = wildcardCommand(words);
    if (found !== null) out.push(found);
  }
  const call = wildcardCall(line);
  if (call !== null) out.push(call);
  return out;
}

// --- scanning files ----------------------------------------------------------------------------

function excerpt(line: string, at: number): string {
  const redacted = redactText(line);
  const trimmed = redacted.trim();
  if (trimmed.length <= EXCERPT_CHARS) return printable(trimmed);
  const from = Math.max(0, Math.min(at - 40, redacted.length - EXCERPT_CHARS));
  return printable(`${from > 0 ? '…' : ''}${redacted.slice(from, from + EXCERPT_CHARS).trim()}…`);
}

/** The findings of one text line. */
export function auditLine(file: string, lineNo: number, line: string): Finding[] {
  const out: Finding[] = [];
  for (const c of credentialsIn(line)) out.push({ file, line: lineNo, kind: 'credential', detail: c.kind, excerpt: excerpt(line, c.start) });
  for (const op of wildcardOperations(line)) out.push({ file, line: lineNo, kind: 'wildcard_file_operation', detail: op, excerpt: excerpt(line, 0) });
  return out;
}

/** Whether bytes look binary: a NUL in the first 8 KiB. */
function isBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

export interface ScannedFile {
  readonly file: string;
  /** SHA-256 of the content scanned (deletion checks the file still holds it). */
  readonly sha256: string | null;
  readonly binary: boolean;
  /** Why it was not scanned. */
  readonly skipped?: string;
  readonly findings: readonly Finding[];
}

/** The findings of one file; binary files (WASM rules included) are searched for credentials in their strings. */
export async function auditFile(file: string): Promise<ScannedFile> {
  let bytes: Buffer;
  try {
    const size = (await stat(file)).size;
    if (size > MAX_SCANNED_BYTES) return { file, sha256: null, binary: false, skipped: `over ${MAX_SCANNED_BYTES / 1024 / 1024} MiB`, findings: [] };
    bytes = await readFile(file);
  } catch (err) {
    return { file, sha256: null, binary: false, skipped: `cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, findings: [] };
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const findings: Finding[] = [];
  if (isBinary(bytes) || file.endsWith('.wasm')) {
    const text = bytes.toString('latin1');
    for (const m of text.matchAll(/[\x20-\x7e]{12,}/g)) {
      for (const c of credentialsIn(m[0])) findings.push({ file, line: null, offset: m.index + c.start, kind: 'credential', detail: c.kind, excerpt: excerpt(m[0], c.start) });
    }
    return { file, sha256, binary: true, findings };
  }
  const lines = bytes.toString('utf8').split('\n');
  lines.forEach((raw, i) => findings.push(...auditLine(file, i + 1, raw.endsWith('\r') ? raw.slice(0, -1) : raw)));
  return { file, sha256, binary: false, findings };
}

// --- deleting flagged lines --------------------------------------------------------------------

/**
 * Removes the given 1-based lines from a text file found under `folder`, atomically (a temporary
 * file in the same folder renamed over it, with the file's mode). Refuses when the file's real
 * path is not inside the folder's, or when it changed since it was scanned (`sha256`).
 */
export async function deleteLines(file: string, folder: string, lines: ReadonlySet<number>, sha256: string): Promise<void> {
  const [realFile, realFolder] = await Promise.all([realpath(file), realpath(folder)]);
  if (!realFile.startsWith(realFolder + sep)) throw new Error(`${printable(file)} is not inside ${printable(folder)}`);
  const info = await stat(realFile);
  const bytes = await readFile(realFile);
  if (createHash('sha256').update(bytes).digest('hex') !== sha256) throw new Error(`${printable(file)} changed since it was scanned; audit it again`);
  // Lines keep their own endings, so the rest of the file is written back byte for byte.
  const kept = bytes
    .toString('utf8')
    .split(/(?<=\n)/)
    .filter((_, i) => !lines.has(i + 1))
    .join('');
  const temp = join(dirname(realFile), `.${basename(realFile)}.${randomBytes(4).toString('hex')}.svc-audit`);
  try {
    await writeFile(temp, kept, { mode: info.mode & 0o777, flag: 'wx' });
    await rename(temp, realFile);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
}
