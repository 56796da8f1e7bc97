/**
 * The raw text of a stream event around its one text delta. A provider streams runs of delta
 * events that differ only in their text (and in a counter or a padding string), so once one event
 * of a run has been parsed, the next are matched against its shape as text and their delta is read
 * without parsing. That is sound because every other byte is the same, and replacing one JSON
 * string literal by another, or one number by another, cannot change the structure around it.
 */

/** Where a piece of the shape lets events differ: the delta's text, a padding string, a counter. */
const TEXT = 0;
const STRING = 1;
const NUMBER = 2;
type Piece = string | typeof TEXT | typeof STRING | typeof NUMBER;

/**
 * Fields whose value changes on every event of a run and means nothing to the redactor: OpenAI's
 * random `obfuscation` padding and the Responses API's `sequence_number`. Written by providers as
 * JSON.stringify writes them; anything else (an escape, a leading zero) falls back to parsing.
 */
const VOLATILE = /"obfuscation":(?="[^"\\\u0000-\u001f]*")|"sequence_number":(?=\d)/g;
const PLAIN_STRING = /"[^"\\\u0000-\u001f]*"/y;
/** A JSON string literal, escapes included: the delta's text (code streams newlines and quotes). */
const STRING_LITERAL = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER_TOKEN = /0|[1-9][0-9]*/y;
/**
 * Longer events are parsed: a regular expression walking a long literal keeps a backtracking
 * entry per character (at 10 MB it exceeds the stack), and a delta is a few tokens.
 */
export const MAX_SHAPED_EVENT = 64 * 1024;

/** Where a delta's text literal starts and ends in an event, and the text it holds. */
export interface ShapedDelta {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export class EventShape {
  private constructor(private readonly pieces: readonly Piece[]) {}

  /**
   * The shape of `raw`, whose text delta is the JSON string literal from `start` to `end` (as
   * `literalAt` found it).
   */
  static around(raw: string, start: number, end: number): EventShape {
    return new EventShape([...piecesOf(raw.slice(0, start)), TEXT, ...piecesOf(raw.slice(end))]);
  }

  /** The delta of `raw` when it is an event of this shape, or null. */
  match(raw: string): ShapedDelta | null {
    if (raw.length > MAX_SHAPED_EVENT) return null;
    let at = 0;
    let start = -1;
    let end = -1;
    for (const piece of this.pieces) {
      if (typeof piece === 'string') {
        // Not startsWith: V8 compares that character by character; equal strings compare as memory.
        if (raw.slice(at, at + piece.length) !== piece) return null;
        at += piece.length;
        continue;
      }
      const token = piece === NUMBER ? NUMBER_TOKEN : piece === TEXT ? STRING_LITERAL : PLAIN_STRING;
      token.lastIndex = at;
      if (!token.test(raw)) return null;
      if (piece === TEXT) {
        start = at;
        end = token.lastIndex;
      }
      at = token.lastIndex;
    }
    if (at !== raw.length) return null;
    const literal = raw.slice(start, end);
    return { start, end, text: literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1) };
  }

  /** An event of this shape, with `text` as its delta and placeholders for its volatile fields: parsed once to verify the shape. */
  probe(text: string): string {
    return this.pieces.map((piece) => (piece === TEXT ? JSON.stringify(text) : piece === STRING ? '""' : piece === NUMBER ? '0' : piece)).join('');
  }
}

/** A stretch of an event outside its delta: literal text, with holes where volatile fields' values are. */
function piecesOf(text: string): Piece[] {
  const pieces: Piece[] = [];
  let from = 0;
  for (const m of text.matchAll(VOLATILE)) {
    const valueAt = m.index + m[0].length;
    const token = text[valueAt] === '"' ? PLAIN_STRING : NUMBER_TOKEN;
    token.lastIndex = valueAt;
    if (!token.test(text)) continue;
    pieces.push(text.slice(from, valueAt), token === PLAIN_STRING ? STRING : NUMBER);
    from = token.lastIndex;
  }
  pieces.push(text.slice(from));
  return pieces.filter((piece) => piece !== '');
}

/**
 * Where `literal` (a text as JSON.stringify writes it) stands in `raw`, or -1 when that is not
 * certain: it must appear once, as a value (after a colon).
 */
export function literalAt(raw: string, literal: string): number {
  const at = raw.indexOf(literal);
  if (at < 0 || raw.indexOf(literal, at + 1) >= 0) return -1;
  let before = at - 1;
  while (before >= 0 && (raw[before] === ' ' || raw[before] === '\t')) before--;
  return raw[before] === ':' ? at : -1;
}
