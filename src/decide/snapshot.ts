import { createHash } from 'node:crypto';
import { canonicalJson } from '../lib/canonical-json.js';
import type { Stamp } from './pins.js';
import { compileRecord, type DecideRecord, type DecideRule } from './record.js';
import type { UnreadableLine } from './sop-loader.js';

/**
 * The 3.0 additions to the policy snapshot (`~/.svc/hooks/policy-snapshot.rules`), shared by the
 * gateway and the gate SDK:
 *
 *   @format 3
 *   @decide <sha256> <canonical JSON of {rule, stamp}>
 *   block {"id":"decide-fallback:<rule id>","tools":[…],"reason":"…"}
 *
 * A 2.x gate skips the `@` lines it does not know and enforces the fallback block line, so a rule
 * stamped enforce refuses its tools there instead of silently passing. A 3.0 gate checks each
 * record's hash and skips a fallback only when its record is intact.
 */
export const SNAPSHOT_FORMAT = 3;
export const FALLBACK_PREFIX = 'decide-fallback:';
/** Tools of a fallback whose line named none it could read: every tool. */
export const EVERY_TOOL = '*';

export interface SnapshotRule {
  readonly rule: DecideRule;
  readonly stamp: Stamp;
}

export interface BlockLine {
  readonly id: string;
  readonly tools: readonly string[];
  readonly reason: string;
  /** Gate rules (not decide fallbacks) may narrow a line to commands: phrases or actions they run. */
  readonly phrases?: readonly string[];
  readonly actions?: readonly string[];
  /** A destructive-command rule (`SVC_GUARD_DISABLE=1` skips these). */
  readonly destructive?: boolean;
  /** A SOP rule's WHERE clause over the tool's input (src/policy/where.ts). */
  readonly where?: string;
}

function upgradeReason(what: string): string {
  return `${what} This gate predates decide rules: upgrade it to 3.0 (svc gates install, or let the sync daemon update it).`;
}

function decideLine(rule: DecideRecord, stamp: Stamp): string {
  const body = canonicalJson({ rule, stamp });
  return `@decide ${createHash('sha256').update(body).digest('hex')} ${body}`;
}

/**
 * The lines a workspace's decide rules add to its snapshot; none when it has no `decide:` line
 * (its snapshot is then exactly the 2.9 one). In a silent-logging workspace fallbacks log instead.
 */
export function decideSnapshotLines(rules: readonly SnapshotRule[], unreadable: readonly UnreadableLine[], opts: { silentLogging: boolean }): string[] {
  if (rules.length === 0 && unreadable.length === 0) return [];
  const verb = opts.silentLogging ? 'log' : 'block';
  const lines = [`@format ${SNAPSHOT_FORMAT}`];
  for (const { rule, stamp } of rules) lines.push(decideLine(rule.record, stamp));
  for (const { rule, stamp } of rules) {
    if (stamp !== 'enforce') continue;
    const fallback: BlockLine = {
      id: `${FALLBACK_PREFIX}${rule.record.id}`,
      // An on: response rule is the gateway's to enforce; its fallback covers only tools it names.
      tools: rule.record.tools,
      reason: upgradeReason(`Guarded by the decide rule '${rule.record.id}'.`),
    };
    lines.push(`${verb} ${JSON.stringify(fallback)}`);
  }
  for (const u of unreadable) {
    const fallback: BlockLine = {
      id: `${FALLBACK_PREFIX}unreadable:${u.file}:${u.line}`,
      tools: u.tools ?? [EVERY_TOOL],
      reason: upgradeReason(`The decide: line at ${u.file}:${u.line} does not read, so its tools are refused until it is fixed.`),
    };
    lines.push(`${verb} ${JSON.stringify(fallback)}`);
  }
  return lines;
}

export interface DecodedDecide {
  readonly rule: DecideRule;
  readonly stamp: Stamp;
}

export interface SnapshotRead {
  /** 2 when the snapshot has no `@format` line. */
  readonly format: number;
  readonly warnings: readonly string[];
  /** `@decide` records whose hash and content check out. */
  readonly decide: readonly DecodedDecide[];
  /** Line numbers of `@decide` records that did not. */
  readonly damaged: readonly number[];
  /** Block lines in force: every block line, fallbacks included unless their record is intact. */
  readonly blocks: readonly BlockLine[];
  readonly logs: readonly BlockLine[];
  /** Lines this reader does not interpret (the rest of the 2.x snapshot), in order. */
  readonly other: readonly string[];
}

export function parseBlockLine(json: string): BlockLine | null {
  try {
    const v = JSON.parse(json) as Partial<BlockLine>;
    if (typeof v.id !== 'string' || !Array.isArray(v.tools) || !v.tools.every((t) => typeof t === 'string') || typeof v.reason !== 'string') return null;
    const strings = (x: unknown) => Array.isArray(x) && x.every((t) => typeof t === 'string');
    return {
      id: v.id,
      tools: v.tools,
      reason: v.reason,
      ...(strings(v.phrases) ? { phrases: v.phrases } : {}),
      ...(strings(v.actions) ? { actions: v.actions } : {}),
      ...(v.destructive === true ? { destructive: true } : {}),
      ...(typeof v.where === 'string' ? { where: v.where } : {}),
    };
  } catch {
    return null;
  }
}

function decodeDecide(rest: string): DecodedDecide | null {
  const space = rest.indexOf(' ');
  if (space < 0) return null;
  const hash = rest.slice(0, space);
  const body = rest.slice(space + 1);
  if (createHash('sha256').update(body).digest('hex') !== hash) return null;
  let value: { rule?: unknown; stamp?: unknown };
  try {
    value = JSON.parse(body) as typeof value;
  } catch {
    return null;
  }
  if (value.stamp !== 'enforce' && value.stamp !== 'shadow') return null;
  const compiled = compileRecord(value.rule, 'snapshot');
  return compiled.ok ? { rule: compiled.rule, stamp: value.stamp } : null;
}

/**
 * Reads a snapshot as a 3.0 gate does. A newer format is reported as `snapshot_format_newer`
 * and read as far as this reader understands it: unknown `@` lines are skipped, fallbacks stay
 * in force unless an intact record explains them.
 */
export function readSnapshot(text: string): SnapshotRead {
  let format = 2;
  const decide: DecodedDecide[] = [];
  const damaged: number[] = [];
  const blockLines: Array<{ verb: 'block' | 'log'; line: BlockLine }> = [];
  const other: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line.length === 0) return;
    const formatMatch = /^@format\s+(\d+)$/.exec(line);
    if (formatMatch !== null) {
      format = Number(formatMatch[1]);
      return;
    }
    if (line.startsWith('@decide ')) {
      const decoded = decodeDecide(line.slice('@decide '.length));
      if (decoded === null) damaged.push(index + 1);
      else decide.push(decoded);
      return;
    }
    if (line.startsWith('@')) return;
    const verbMatch = /^(block|log)\s+(\{.*\})$/.exec(line);
    const parsed = verbMatch === null ? null : parseBlockLine(verbMatch[2]!);
    if (parsed === null) other.push(raw);
    else blockLines.push({ verb: verbMatch![1] as 'block' | 'log', line: parsed });
  });
  const intact = new Set(decide.map((d) => `${FALLBACK_PREFIX}${d.rule.record.id}`));
  const inForce = blockLines.filter(({ line }) => !(line.id.startsWith(FALLBACK_PREFIX) && intact.has(line.id)));
  return {
    format,
    warnings: format > SNAPSHOT_FORMAT ? ['snapshot_format_newer'] : [],
    decide,
    damaged,
    blocks: inForce.filter((b) => b.verb === 'block').map((b) => b.line),
    logs: inForce.filter((b) => b.verb === 'log').map((b) => b.line),
    other,
  };
}

/** The block line refusing `tool`, if any (a fallback on every tool refuses them all). */
export function blockFor(read: SnapshotRead, tool: string): BlockLine | undefined {
  return read.blocks.find((b) => b.tools.includes(tool) || b.tools.includes(EVERY_TOOL));
}
