/**
 * Canonical JSON: object keys sorted at every level, no whitespace, so two calls with the same
 * arguments in a different key order compare equal. A string that is itself JSON (OpenAI sends
 * tool arguments as a JSON string) is parsed first.
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

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    const parts: string[] = [];
    for (const key of keys) if (record[key] !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
