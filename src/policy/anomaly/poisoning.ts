import { hash } from 'node:crypto';
import RE2 from 're2';
import type { ToolDefinition } from './history.js';
import { round2, type AnomalyFinding } from './finding.js';

/** What a hidden instruction in a tool's description or schema looks like, by kind. */
const SIGNS: ReadonlyArray<readonly [kind: string, pattern: RE2]> = [
  ['an <IMPORTANT>-style block', new RE2(String.raw`<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin)\s*>`, 'i')],
  [
    'an instruction to hide actions from the user',
    new RE2(
      String.raw`\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|show|notify|alert)\b[^\n]{0,30}\buser\b|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+)?user\b|\b(?:silently|secretly|covertly)\b`,
      'i',
    ),
  ],
  [
    'an instruction to read credentials',
    new RE2(
      String.raw`\b(?:read|cat|open|include|send|pass|upload|attach|append|copy|load)\b[^\n]{0,80}(?:~/\.ssh|\bid_(?:rsa|ed25519|ecdsa)\b|\.aws/credentials|(?:^|[\s/'"(])\.env\b|\.npmrc|\.netrc|\.pgpass|mcp\.json|credentials\.json|\bprivate[_ ]key\b)`,
      'i',
    ),
  ],
  ['invisible characters', new RE2(String.raw`[\x{E0000}-\x{E007F}\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{2064}\x{FEFF}]`)],
  [
    'an instruction overriding the model’s instructions',
    new RE2(
      String.raw`\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:previous|prior|above|earlier|system|original)\s+(?:instructions?|prompts?|rules)|\b(?:before|prior\s+to)\s+(?:using|calling)\s+(?:this|any)\s+tool\b[^\n]{0,80}\b(?:must|first|always)\b`,
      'i',
    ),
  ],
];

/** All the signs in one pattern: one pass over every definition rules most requests out. */
const ANY_SIGN = new RE2(SIGNS.map(([, re]) => `(?:${re.source})`).join('|'), 'i');

/** Per tool, a hash of its description and input schema: a change within a session is a rug pull. */
export function toolHashes(tools: readonly ToolDefinition[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of tools) out[t.name] = hash('sha256', `${t.description}\u0000${t.schema}`).slice(0, 24);
  return out;
}

/**
 * `tool_poisoning` from the definitions alone: descriptions or schemas carrying hidden
 * instructions. The rug pull (a definition changing within the session) needs the session's
 * earlier hashes and is judged on the main thread (see session.ts).
 */
export function detectPoisonedTools(tools: readonly ToolDefinition[]): AnomalyFinding | null {
  if (tools.length === 0 || !ANY_SIGN.test(tools.map((t) => `${t.description}\n${t.schema}`).join('\n'))) return null;
  const poisoned: string[] = [];
  const kinds = new Set<string>();
  for (const t of tools) {
    const text = `${t.description}\n${t.schema}`;
    let hit = false;
    for (const [kind, re] of SIGNS) {
      if (re.test(text)) {
        kinds.add(kind);
        hit = true;
      }
    }
    if (hit) poisoned.push(t.name);
  }
  if (poisoned.length === 0) return null;
  return {
    detector: 'tool_poisoning',
    confidence: round2(0.85 + 0.05 * (kinds.size - 1)),
    repeats: poisoned.length,
    tools: poisoned,
    summary: `tool definitions with hidden instructions: ${poisoned.join(', ')} (${[...kinds].join('; ')})`,
  };
}

export function rugPullFinding(changed: readonly string[]): AnomalyFinding {
  return {
    detector: 'tool_poisoning',
    confidence: 0.9,
    repeats: changed.length,
    tools: changed,
    summary: `the description or input schema of ${changed.join(', ')} changed within the session`,
  };
}
