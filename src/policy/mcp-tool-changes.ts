import { createHash } from 'node:crypto';
import { canonicalJson } from '../lib/canonical-json.js';

/**
 * An MCP server's tool set as it is pinned when the server is approved, and the score of a change
 * to it (a "rug pull": a server that changes what its tools say or accept after approval). A hash
 * of the descriptions only says that something changed; this says what, and whether it matters.
 */

/** One tool as pinned: what the model reads and what the tool accepts. */
export interface PinnedTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: unknown;
  readonly annotations: Readonly<Record<string, unknown>>;
}

export type ToolChangeKind =
  | 'tool_added'
  | 'tool_removed'
  | 'wording'
  | 'renamed'
  | 'new_destination'
  | 'new_instructions'
  | 'cross_reference'
  | 'schema_widened'
  | 'annotation_flipped';

export interface ToolChangeFinding {
  readonly tool: string;
  readonly kind: ToolChangeKind;
  readonly highRisk: boolean;
  readonly detail: string;
}

export interface ToolSetChange {
  /** none: the same tool set; low: accepted as the new pin; high: the workspace's mcpHighRiskToolChange applies. */
  readonly risk: 'none' | 'low' | 'high';
  readonly findings: readonly ToolChangeFinding[];
}

/** Bounds on what is pinned, so a hostile server cannot make the pin itself a burden. */
export const MAX_PINNED_TOOLS = 1000;
const MAX_DESCRIPTION = 16 * 1024;
const MAX_DEPTH = 24;

/** The tools of a `tools/list` result in pinned form, by name, at most MAX_PINNED_TOOLS. */
export function pinnedToolSet(listed: readonly unknown[]): PinnedTool[] {
  const tools = new Map<string, PinnedTool>();
  for (const item of listed) {
    if (typeof item !== 'object' || item === null) continue;
    const t = item as Record<string, unknown>;
    if (typeof t.name !== 'string' || t.name === '' || tools.has(t.name)) continue;
    tools.set(t.name, {
      name: t.name,
      description: typeof t.description === 'string' ? t.description.slice(0, MAX_DESCRIPTION) : '',
      inputSchema: t.inputSchema ?? {},
      annotations: typeof t.annotations === 'object' && t.annotations !== null ? (t.annotations as Record<string, unknown>) : {},
    });
    if (tools.size >= MAX_PINNED_TOOLS) break;
  }
  return [...tools.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The digest a pin is known by: SHA-256 of the canonical JSON of the sorted tool set. */
export function toolSetDigest(tools: readonly PinnedTool[]): string {
  return createHash('sha256').update(canonicalJson(tools)).digest('hex');
}

/**
 * Scores the change from the pinned tool set to the current one. High risk: a new outbound
 * destination (URL, host, e-mail, IP anywhere in the tool), new instructions to the model or
 * references to sensitive files, references to other tools or servers, a widened input schema,
 * a flipped behaviour hint (readOnlyHint, destructiveHint, idempotentHint, openWorldHint — in
 * either direction: a tool that starts calling itself read-only is as suspect as one turning
 * destructive), a tool renamed with the same body. Wording edits, removed tools and new tools
 * that carry none of these are low risk.
 */
export function scoreToolSetChange(pinned: readonly PinnedTool[], current: readonly PinnedTool[]): ToolSetChange {
  const before = new Map(pinned.map((t) => [t.name, t]));
  const after = new Map(current.map((t) => [t.name, t]));
  const names = new Set([...before.keys(), ...after.keys()]);
  const findings: ToolChangeFinding[] = [];
  const removed = pinned.filter((t) => !after.has(t.name));
  const renamedFrom = new Map<string, string>();
  for (const tool of current) {
    if (before.has(tool.name)) continue;
    const body = bodyOf(tool);
    const twin = removed.find((r) => !renamedFrom.has(r.name) && bodyOf(r) === body);
    if (twin !== undefined) renamedFrom.set(twin.name, tool.name);
  }
  for (const [from, to] of renamedFrom) findings.push({ tool: to, kind: 'renamed', highRisk: true, detail: `'${from}' now answers as '${to}' with the same description and schema` });

  for (const tool of current) {
    const old = before.get(tool.name);
    if (old === undefined && [...renamedFrom.values()].includes(tool.name)) continue;
    if (old !== undefined && canonicalJson(old) === canonicalJson(tool)) continue;
    const others = [...names].filter((n) => n !== tool.name);
    findings.push(...textFindings(old, tool, others));
    if (old === undefined) {
      findings.push({ tool: tool.name, kind: 'tool_added', highRisk: false, detail: `new tool '${tool.name}'` });
      continue;
    }
    for (const widened of schemaWidenings(old.inputSchema, tool.inputSchema, 'input', 0)) findings.push({ tool: tool.name, kind: 'schema_widened', highRisk: true, detail: widened });
    for (const hint of flippedHints(old.annotations, tool.annotations)) findings.push({ tool: tool.name, kind: 'annotation_flipped', highRisk: true, detail: hint });
    if (old.description !== tool.description && !findings.some((f) => f.tool === tool.name)) {
      findings.push({ tool: tool.name, kind: 'wording', highRisk: false, detail: 'the description was reworded' });
    } else if (canonicalJson(old) !== canonicalJson(tool) && !findings.some((f) => f.tool === tool.name)) {
      findings.push({ tool: tool.name, kind: 'wording', highRisk: false, detail: 'its schema or annotations changed without accepting more or saying more' });
    }
  }
  for (const tool of removed) {
    if (!renamedFrom.has(tool.name)) findings.push({ tool: tool.name, kind: 'tool_removed', highRisk: false, detail: `tool '${tool.name}' is gone` });
  }
  const risk = findings.length === 0 ? 'none' : findings.some((f) => f.highRisk) ? 'high' : 'low';
  return { risk, findings };
}

/** A tool without its name: what a rename keeps. */
function bodyOf(tool: PinnedTool): string {
  return canonicalJson({ description: tool.description, inputSchema: tool.inputSchema });
}

/** Every human-readable string of a tool: its description and each description, title, default, example or enum value in its schema. */
function textsOf(tool: PinnedTool): string[] {
  const out = [tool.description];
  const visit = (node: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || node === null || typeof node !== 'object') {
      if (typeof node === 'string') out.push(node);
      return;
    }
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string') {
        if (key !== 'type' && key !== '$schema' && key !== 'format') out.push(value);
      } else visit(value, depth + 1);
    }
  };
  visit(tool.inputSchema, 0);
  return out;
}

/** Sentences (or lines) of text, normalised, so a reworded paragraph shows only what it added. */
function sentencesOf(texts: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const text of texts) {
    for (const s of text.split(/(?<=[.!?])\s+|\n+/)) {
      const n = s.replace(/\s+/g, ' ').trim().toLowerCase();
      if (n !== '') out.add(n);
    }
  }
  return out;
}

// A local part is at most 64 characters and a host name has few labels: with `+` in their place,
// a long run of `a.a.a…` was read from every word in it to its end, in quadratic time.
const URL = /\b(?:https?|wss?|ftp|file):\/\/([^\s/"'<>)\]]+)/gi;
const EMAIL = /\b[a-z0-9._%+-]{1,64}@((?:[a-z0-9-]+\.)+[a-z]{2,})\b/gi;
const IPV4 = /\b((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})\b/g;
const HOST = /\b((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.){1,16}(?:com|net|org|io|dev|ai|app|co|xyz|sh|me|info|biz|ru|cn|tk|top|site|online|cloud|link|click|zip|to|gg|ly|so|us|uk|de)\b)/gi;

/** Hosts and addresses a tool's text names as places data could go. */
function destinationsOf(texts: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const text of texts) {
    for (const re of [URL, EMAIL, IPV4, HOST]) {
      for (const m of text.matchAll(re)) out.add(m[1]!.toLowerCase().replace(/:\d+$/, ''));
    }
  }
  return out;
}

/** Phrases that address the model or reach for secrets: what a poisoned description adds. */
const INSTRUCTION_CUES: readonly RegExp[] = [
  /\b(?:you|the (?:assistant|model|ai|agent|llm)|assistants?|agents?)\b[^.]{0,40}\b(?:must|should|need to|have to|are required to|shall)\b/,
  /\b(?:before|after|when|whenever) (?:using|calling|invoking|running|you use|you call)\b/,
  /\b(?:do not|don't|never|must not) (?:tell|mention|inform|reveal|show|notify|alert|disclose)\b/,
  /\bwithout (?:telling|informing|asking|notifying|mentioning)\b/,
  /\bignore (?:all |any |the )?(?:previous|prior|above|earlier|other|user)\b/,
  /<\/?(?:important|system|instructions?|secret|hidden)>/,
  /\b(?:this|it) is (?:very |extremely )?(?:important|critical|crucial|mandatory)\b/,
  /(?:~\/|\$home\/|\/home\/[^/\s]+\/|\b)\.(?:ssh|aws|gnupg|netrc|npmrc|pypirc|git-credentials|docker\/config)\b/,
  /\bid_(?:rsa|ed25519|ecdsa)\b|\bmcp\.json\b|\.cursor\/|\.claude\//,
  /\b(?:read|send|upload|include|attach|pass|forward|copy) (?:the |its |their |all )?(?:contents?|file|conversation|chat history|environment|env vars?)\b/,
];

const CROSS_REFERENCE = /\bmcp__|\b(?:other|another|all|every) (?:tools?|servers?|mcp servers?)\b|\b(?:tool|server|function) (?:called|named)\b/;

function textFindings(old: PinnedTool | undefined, tool: PinnedTool, others: readonly string[]): ToolChangeFinding[] {
  const findings: ToolChangeFinding[] = [];
  const newTexts = textsOf(tool);
  const oldTexts = old === undefined ? [] : textsOf(old);
  const known = destinationsOf(oldTexts);
  const fresh = [...destinationsOf(newTexts)].filter((d) => !known.has(d));
  if (fresh.length > 0) findings.push({ tool: tool.name, kind: 'new_destination', highRisk: true, detail: `names ${fresh.slice(0, 5).join(', ')} for the first time` });

  const oldSentences = sentencesOf(oldTexts);
  const added = [...sentencesOf(newTexts)].filter((s) => !oldSentences.has(s));
  if (added.length === 0) return findings;
  const addedText = added.join('\n');
  const cue = INSTRUCTION_CUES.find((re) => re.test(addedText));
  if (cue !== undefined) {
    const sentence = added.find((s) => cue.test(s)) ?? added[0]!;
    findings.push({ tool: tool.name, kind: 'new_instructions', highRisk: true, detail: `adds instructions to the model: "${clip(sentence)}"` });
  }
  const named = others.filter((n) => n.length >= 3 && /[_\-.]|[a-z][A-Z]/.test(n) && new RegExp(`(?<![\\w-])${escape(n.toLowerCase())}(?![\\w-])`).test(addedText));
  if (CROSS_REFERENCE.test(addedText) || named.length > 0) {
    const what = named.length > 0 ? `names other tools (${named.slice(0, 3).join(', ')})` : 'refers to other tools or servers';
    findings.push({ tool: tool.name, kind: 'cross_reference', highRisk: true, detail: what });
  }
  return findings;
}

const BEHAVIOUR_HINTS = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true } as const;

/** Hints whose effective value (MCP's defaults where absent) changed. */
function flippedHints(old: Readonly<Record<string, unknown>>, now: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  for (const [hint, fallback] of Object.entries(BEHAVIOUR_HINTS)) {
    const was = typeof old[hint] === 'boolean' ? old[hint] : fallback;
    const is = typeof now[hint] === 'boolean' ? now[hint] : fallback;
    if (was !== is) out.push(`${hint} ${String(was)} → ${String(is)}`);
  }
  return out;
}

const LIMITS = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'] as const;
const CONSTRAINTS = ['pattern', 'format', 'const', 'enum', 'minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'not'] as const;

/** How the new schema accepts input the old one refused: new properties, looser types, limits or constraints dropped. */
function schemaWidenings(old: unknown, now: unknown, at: string, depth: number): string[] {
  if (depth > MAX_DEPTH || typeof old !== 'object' || old === null || typeof now !== 'object' || now === null) return [];
  const a = old as Record<string, unknown>;
  const b = now as Record<string, unknown>;
  const out: string[] = [];
  const typesOf = (s: Record<string, unknown>) => (s.type === undefined ? null : new Set(Array.isArray(s.type) ? s.type : [s.type]));
  const ta = typesOf(a);
  const tb = typesOf(b);
  if (ta !== null && (tb === null || [...tb].some((t) => !ta.has(t)))) out.push(`${at} accepts more types (${[...ta].join('|')} → ${tb === null ? 'any' : [...tb].join('|')})`);
  if (a.additionalProperties === false && b.additionalProperties !== false) out.push(`${at} accepts properties it did not name`);
  for (const limit of LIMITS) {
    if (typeof a[limit] === 'number' && (typeof b[limit] !== 'number' || (b[limit] as number) > (a[limit] as number))) out.push(`${at} ${limit} raised (${String(a[limit])} → ${String(b[limit] ?? 'none')})`);
  }
  for (const constraint of CONSTRAINTS) {
    if (a[constraint] !== undefined && b[constraint] === undefined) out.push(`${at} dropped ${constraint}`);
  }
  if (Array.isArray(a.enum) && Array.isArray(b.enum)) {
    const known = new Set(a.enum.map((v) => canonicalJson(v)));
    const extra = b.enum.filter((v) => !known.has(canonicalJson(v)));
    if (extra.length > 0) out.push(`${at} accepts new values ${clip(extra.map((v) => JSON.stringify(v)).join(', '))}`);
  }
  const pa = (typeof a.properties === 'object' && a.properties !== null ? a.properties : {}) as Record<string, unknown>;
  const pb = (typeof b.properties === 'object' && b.properties !== null ? b.properties : {}) as Record<string, unknown>;
  for (const [name, schema] of Object.entries(pb)) {
    if (!(name in pa)) out.push(`${at} has a new parameter '${name}'`);
    else out.push(...schemaWidenings(pa[name], schema, `${at}.${name}`, depth + 1));
  }
  if (a.items !== undefined) out.push(...schemaWidenings(a.items, b.items ?? {}, `${at}[]`, depth + 1));
  return out;
}

function clip(text: string): string {
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
