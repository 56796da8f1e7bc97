/**
 * The raw text of a stream event around its one text delta. A provider streams runs of delta
 * events that differ only in their text (and in a counter or a padding string), so once one event
 * of a run has been parsed, the next are matched against its shape as text and their delta is read
 * without parsing. That is sound because every other byte is the same, and replacing one JSON
 * string literal by another, or one number by another, cannot change the structure around it.
 * Ids and creation times are holes too, so a shape is not one stream's but its provider's model's.
 */

/**
 * Where a piece of the shape lets events differ: the delta's text; a string or a number that
 * changes from event to event (a padding, a counter); one that changes from stream to stream (an
 * id, a creation time).
 */
const TEXT = 0;
const STRING = 1;
const NUMBER = 2;
const STREAM_STRING = 3;
const STREAM_NUMBER = 4;
type Hole = typeof TEXT | typeof STRING | typeof NUMBER | typeof STREAM_STRING | typeof STREAM_NUMBER;
type Piece = string | Hole;

/**
 * Fields whose value means nothing to the redactor and changes from event to event (OpenAI's random
 * `obfuscation` padding, the Responses API's `sequence_number`: captured) or from stream to stream
 * (ids and creation times), so one shape serves every stream of a provider's model. Written by
 * providers as JSON.stringify writes them; anything else (an escape, a leading zero) falls back to
 * parsing.
 */
const VOLATILE = /"(?:(obfuscation)|id|item_id)":(?="[^"\\\u0000-\u001f]*")|"(?:(sequence_number)|created)":(?=\d)/g;
/** Longer events are parsed: a delta is a few tokens, and the bound keeps a match's cost small whatever a provider sends. */
export const MAX_SHAPED_EVENT = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
const NINE = 0x39;
const LETTER_U = 0x75;
const HEX4 = /^[0-9a-fA-F]{4}$/;
/** What may follow a backslash in a JSON string, besides `u` and four hex digits. */
const SIMPLE_ESCAPES = '"\\/bfnrt';

/**
 * Just past the JSON string literal at `at`, or -1 when none starts there. With `plain`, a literal
 * with an escape counts as none. Scanned by hand: a sticky regular expression costs more to call
 * than these few characters cost to read.
 */
function stringEnd(raw: string, at: number, plain: boolean): number {
  if (raw.charCodeAt(at) !== QUOTE) return -1;
  for (let i = at + 1; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) continue;
    if (plain) return -1;
    const escaped = raw.charCodeAt(++i);
    if (escaped === LETTER_U) {
      if (!HEX4.test(raw.slice(i + 1, i + 5))) return -1;
      i += 4;
    } else if (!SIMPLE_ESCAPES.includes(String.fromCharCode(escaped))) return -1;
  }
  return -1;
}

/** Just past the JSON non-negative integer at `at` (no leading zero), or -1. */
function numberEnd(raw: string, at: number): number {
  const first = raw.charCodeAt(at);
  if (first === ZERO) return at + 1;
  if (!(first > ZERO && first <= NINE)) return -1;
  let i = at + 1;
  while (i < raw.length && raw.charCodeAt(i) >= ZERO && raw.charCodeAt(i) <= NINE) i++;
  return i;
}

/** Where a delta's text literal starts and ends in an event, and the text it holds. */
export interface ShapedDelta {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export class EventShape {
  private constructor(private readonly pieces: readonly Piece[]) {}

  /** Equal for equal shapes. */
  get key(): string {
    return this.pieces.map((piece) => (typeof piece === 'string' ? JSON.stringify(piece) : String(piece))).join(',');
  }

  /**
   * The shape of `raw`, whose text delta is the JSON string literal from `start` to `end` (as
   * `literalAt` found it).
   */
  static around(raw: string, start: number, end: number): EventShape {
    return new EventShape([...piecesOf(raw.slice(0, start)), TEXT, ...piecesOf(raw.slice(end))]);
  }

  /** The delta of `raw` when it is an event of this shape, or null. */
  match(raw: string): ShapedDelta | null {
    return this.scan(raw, null);
  }

  /**
   * This shape with the values that change from stream to stream as `raw`, an event of it, has
   * them: the shape of the rest of `raw`'s stream, whose events are then compared, not scanned,
   * where those values stand.
   */
  specialised(raw: string): EventShape {
    const spans: number[] = [];
    if (this.scan(raw, spans) === null || !this.pieces.some((piece) => piece === STREAM_STRING || piece === STREAM_NUMBER)) return this;
    const pieces: Piece[] = [];
    let hole = 0;
    for (const piece of this.pieces) {
      const text = typeof piece === 'string' ? piece : piece === STREAM_STRING || piece === STREAM_NUMBER ? raw.slice(spans[hole]!, spans[hole + 1]!) : null;
      if (typeof piece !== 'string') hole += 2;
      if (text === null) pieces.push(piece);
      else if (typeof pieces.at(-1) === 'string') pieces[pieces.length - 1] += text;
      else pieces.push(text);
    }
    return new EventShape(pieces);
  }

  /** `match`, noting where each hole's value starts and ends in `spans` when given. */
  private scan(raw: string, spans: number[] | null): ShapedDelta | null {
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
      const next = piece === NUMBER || piece === STREAM_NUMBER ? numberEnd(raw, at) : stringEnd(raw, at, piece !== TEXT);
      if (next < 0) return null;
      spans?.push(at, next);
      if (piece === TEXT) {
        start = at;
        end = next;
      }
      at = next;
    }
    if (at !== raw.length) return null;
    const literal = raw.slice(start, end);
    return { start, end, text: literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1) };
  }

  /** An event of this shape, with `text` as its delta and placeholders for its volatile fields: parsed once to verify the shape. */
  probe(text: string): string {
    return this.pieces.map((piece) => (piece === TEXT ? JSON.stringify(text) : piece === STRING || piece === STREAM_STRING ? '""' : piece === NUMBER || piece === STREAM_NUMBER ? '0' : piece)).join('');
  }
}

/** A stretch of an event outside its delta: literal text, with holes where volatile fields' values are. */
function piecesOf(text: string): Piece[] {
  const pieces: Piece[] = [];
  let from = 0;
  for (const m of text.matchAll(VOLATILE)) {
    const valueAt = m.index + m[0].length;
    const perEvent = m[1] !== undefined || m[2] !== undefined;
    const string = text[valueAt] === '"';
    const kind = string ? (perEvent ? STRING : STREAM_STRING) : perEvent ? NUMBER : STREAM_NUMBER;
    const end = string ? stringEnd(text, valueAt, true) : numberEnd(text, valueAt);
    if (end < 0) continue;
    pieces.push(text.slice(from, valueAt), kind);
    from = end;
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
