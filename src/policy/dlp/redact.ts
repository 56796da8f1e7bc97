import type { DlpMatch } from './scanner.js';

/**
 * `text` with each match replaced by `[REDACTED:<detector id>]`. Matches are taken in order of
 * start; one that overlaps an earlier one only extends the redacted span.
 */
export function redact(text: string, matches: readonly DlpMatch[]): string {
  const ordered = [...matches].sort((a, b) => a.start - b.start);
  let out = '';
  let cursor = 0;
  for (const match of ordered) {
    if (match.end <= cursor) continue;
    if (match.start >= cursor) out += `${text.slice(cursor, match.start)}[REDACTED:${match.detector}]`;
    cursor = match.end;
  }
  return out + text.slice(cursor);
}
