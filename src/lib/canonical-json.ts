import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted at every level (by UTF-16 code unit, as `Array.prototype.sort`
 * orders them), array order kept, no whitespace, `undefined` members left out. Two values that
 * differ only in key order write the same text. `shorten`, when given, stands in for every string
 * value (not keys) before it is written.
 */
export function canonicalJson(value: unknown, shorten?: (text: string) => string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(typeof value === 'string' && shorten !== undefined ? shorten(value) : value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i], shorten);
    return out + ']';
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  // Most objects arrive with their keys in order already; sorting is only paid when they are not.
  if (!isSorted(keys)) keys.sort();
  let out = '{';
  for (const key of keys) {
    const member = obj[key];
    if (member === undefined) continue;
    out += (out.length === 1 ? '' : ',') + JSON.stringify(key) + ':' + canonicalJson(member, shorten);
  }
  return out + '}';
}

function isSorted(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (keys[i - 1]! > keys[i]!) return false;
  return true;
}

/**
 * A tool call's arguments as canonical JSON. A string that is itself JSON (OpenAI sends tool
 * arguments as a JSON string) is parsed first, so `'{"b":1,"a":2}'` and `{ a: 2, b: 1 }` agree;
 * any other string (a freeform tool's raw input) is the JSON string of its trimmed text.
 */
export function canonicalArguments(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return canonicalJson(JSON.parse(value));
    } catch {
      return JSON.stringify(value.trim());
    }
  }
  return canonicalJson(value ?? {});
}

/**
 * SHA-256 (hex) of a tool call's arguments as canonical JSON: what an approval of a held call is
 * matched on, with the rule and the tool name (seed 002: the exact call).
 */
export function argumentsSha256(value: unknown): string {
  return createHash('sha256').update(canonicalArguments(value), 'utf8').digest('hex');
}
