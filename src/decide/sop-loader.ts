import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { compileRecord, type DecideRule } from './record.js';

/** A `decide:` line that does not read. Its fallback blocks `tools`, or every tool when null. */
export interface UnreadableLine {
  readonly file: string;
  readonly line: number;
  readonly problems: readonly string[];
  readonly tools: readonly string[] | null;
}

export interface LoadedRules {
  readonly rules: readonly DecideRule[];
  readonly unreadable: readonly UnreadableLine[];
  /** The SOP texts (without their decide lines), for questions about "any active SOP constraint". */
  readonly sopTexts: readonly { readonly file: string; readonly text: string }[];
}

const DECIDE_PREFIX = /^\s*decide:\s?/;

/** The tools an unreadable line still names, when its JSON reads that far. */
function salvageTools(value: unknown): string[] | null {
  if (typeof value !== 'object' || value === null || !('tools' in value)) return null;
  const tools = (value as { tools: unknown }).tools;
  if (!Array.isArray(tools)) return null;
  const names = tools.filter((t): t is string => typeof t === 'string' && t.length > 0);
  return names.length > 0 ? names : null;
}

/** Reads the `decide:` lines of one markdown text. Duplicate ids are unreadable from the second on. */
export function parseSopText(text: string, file: string, seen = new Set<string>()): { rules: DecideRule[]; unreadable: UnreadableLine[]; prose: string } {
  const rules: DecideRule[] = [];
  const unreadable: UnreadableLine[] = [];
  const prose: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const prefix = DECIDE_PREFIX.exec(raw);
    if (prefix === null) {
      prose.push(raw);
      continue;
    }
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw.slice(prefix[0].length));
    } catch (err) {
      unreadable.push({ file, line, problems: [`not JSON: ${(err as Error).message}`], tools: null });
      continue;
    }
    const result = compileRecord(value, `${file}:${line}`);
    if (!result.ok) {
      unreadable.push({ file, line, problems: result.problems, tools: salvageTools(value) });
      continue;
    }
    if (seen.has(result.rule.record.id)) {
      unreadable.push({ file, line, problems: [`id: '${result.rule.record.id}' is already used by another rule`], tools: result.rule.record.tools.length > 0 ? result.rule.record.tools : null });
      continue;
    }
    seen.add(result.rule.record.id);
    rules.push(result.rule);
  }
  return { rules, unreadable, prose: prose.join('\n') };
}

/** The `.md` files under `dir`, depth first in name order; none when it does not exist. */
export async function markdownFiles(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await markdownFiles(path)));
    else if (entry.isFile() && entry.name.endsWith('.md')) files.push(path);
  }
  return files;
}

/**
 * Every decide rule under `<root>/.svc/sops/` (`<name>/*.md`, and the pulled `<slug>.md` files),
 * plus rule records from the local config. File names in the result are relative to `root`.
 */
export async function loadRules(root: string, configRecords: readonly unknown[] = []): Promise<LoadedRules> {
  const seen = new Set<string>();
  const rules: DecideRule[] = [];
  const unreadable: UnreadableLine[] = [];
  const sopTexts: { file: string; text: string }[] = [];
  for (const path of await markdownFiles(join(root, '.svc', 'sops'))) {
    const file = relative(root, path);
    const parsed = parseSopText(await readFile(path, 'utf8'), file, seen);
    rules.push(...parsed.rules);
    unreadable.push(...parsed.unreadable);
    sopTexts.push({ file, text: parsed.prose });
  }
  const fromConfig = compileRecords(configRecords, seen);
  rules.push(...fromConfig.rules);
  unreadable.push(...fromConfig.unreadable);
  return { rules, unreadable, sopTexts };
}

/**
 * Decide rule records from a config (the local config's `decide_rules`, a policy's records): each
 * compiled, or an unreadable line naming `config decide_rules[i]`. Ids in `seen` are taken.
 */
export function compileRecords(records: readonly unknown[], seen = new Set<string>()): { rules: DecideRule[]; unreadable: UnreadableLine[] } {
  const rules: DecideRule[] = [];
  const unreadable: UnreadableLine[] = [];
  records.forEach((value, index) => {
    const file = `config decide_rules[${index}]`;
    const result = compileRecord(value, file);
    if (!result.ok) unreadable.push({ file, line: 0, problems: result.problems, tools: salvageTools(value) });
    else if (seen.has(result.rule.record.id)) unreadable.push({ file, line: 0, problems: [`id: '${result.rule.record.id}' is already used by another rule`], tools: null });
    else {
      seen.add(result.rule.record.id);
      rules.push(result.rule);
    }
  });
  return { rules, unreadable };
}
