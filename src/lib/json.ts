export type JsonObject = Record<string, unknown>;

/** Whether a byte is one of JSON's whitespace: space, tab, line feed or carriage return. */
export function isJsonWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

/** A plain JSON object: not null, not an array. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The top-level fields of `object` that are neither objects nor arrays: what a request's routing reads, without keeping the rest alive. */
export function scalarFields(object: JsonObject): JsonObject {
  const fields: JsonObject = {};
  for (const [field, value] of Object.entries(object)) if (typeof value !== 'object' || value === null) fields[field] = value;
  return fields;
}

/** The body parsed, when it is a JSON object; null for anything else (malformed, an array, a scalar). */
export function parseJsonObject(body: Buffer): JsonObject | null {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return isJsonObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Whether two parsed JSON values are equal: the same scalars, arrays in order, objects by key in any order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  // Keys counted as they are enumerated: a parse's objects list only their own keys, and listing
  // them into arrays cost more than the comparison (tool definitions compared every turn).
  let keys = 0;
  for (const key in a) {
    if (!Object.hasOwn(b, key) || !sameJson((a as JsonObject)[key], (b as JsonObject)[key])) return false;
    keys++;
  }
  for (const _ in b) if (--keys < 0) return false;
  return keys === 0;
}
