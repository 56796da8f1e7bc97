export type JsonObject = Record<string, unknown>;

/** A plain JSON object: not null, not an array. */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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
