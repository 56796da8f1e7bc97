import { Buffer } from 'node:buffer';

/** A string of a parsed JSON document changed after it was parsed: what it was, what it is now. */
export interface StringEdit {
  readonly before: string;
  readonly after: string;
}

const BACKSLASH = 0x5c;
const SPACE = 0x20;

/** An edited string's place in the document's bytes, and what is written there instead. */
interface Place {
  readonly at: number;
  readonly end: number;
  readonly token: Buffer;
}

/**
 * `raw`, a JSON document, with each edited string written in place of the one it replaced, where
 * `edited` is `raw`'s parse with `edits` made to it: the bytes a serialisation of `edited` would
 * mean, without serialising the rest again. Null when the splice cannot be shown exact, and the
 * caller serialises `edited` instead.
 *
 * The result is written into `raw`'s own bytes, and is a view of them, when no edit up to any
 * point has made the document longer (a redaction is usually shorter than the text it replaces:
 * `[REDACTED:pii.email]` against an address): the caller gives `raw` up, and no second copy of a
 * large body is made. Otherwise it is a new buffer and `raw` is left as it was.
 *
 * It is exact when
 * - `raw` holds as many strings as `edited` does, keys included (a key given twice is one string of
 *   the parse but two of `raw`, and the dropped one might hold the text looked for);
 * - no string of `edited` is one of the texts replaced, and no two edits replaced the same text:
 *   each was then the only string of its kind in the parse, so in `raw` too;
 * - each replaced text is written in `raw` as `JSON.stringify` writes it, found where a string
 *   begins (not inside another).
 */
export function spliceStrings(raw: Uint8Array, edited: unknown, edits: readonly StringEdit[]): Buffer | null {
  const replaced = byLength(edits.map((e) => e.before));
  if (replaced === null) return null;
  const strings = countStrings(edited, replaced);
  if (strings < 0) return null;
  const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const starts = stringStarts(bytes);
  if (starts.length !== strings) return null;
  const places: Place[] = [];
  for (const { before, after } of edits) {
    const token = Buffer.from(JSON.stringify(before));
    let at = bytes.indexOf(token);
    while (at >= 0 && !includesSorted(starts, at)) at = bytes.indexOf(token, at + 1);
    if (at < 0) return null;
    places.push({ at, end: at + token.length, token: Buffer.from(JSON.stringify(after)) });
  }
  places.sort((a, b) => a.at - b.at);
  return neverLonger(places) ? spliceInPlace(bytes, places) : spliceCopy(bytes, places);
}

/** Whether the document is no longer after each edit, taken in order, than it was before. */
function neverLonger(places: readonly Place[]): boolean {
  let growth = 0;
  for (const place of places) {
    growth += place.token.length - (place.end - place.at);
    if (growth > 0) return false;
  }
  return true;
}

/**
 * `places` written into `bytes` itself, what lies between them moved down behind them: each token
 * then ends at or before the end of the text it replaces, so nothing is overwritten before it is
 * moved. The bytes left over past the new end are blanked, so none of an edited text stays there.
 */
function spliceInPlace(bytes: Buffer, places: readonly Place[]): Buffer {
  let to = places[0]!.at;
  let from = to;
  for (const place of places) {
    bytes.copyWithin(to, from, place.at);
    to += place.at - from;
    to += place.token.copy(bytes, to);
    from = place.end;
  }
  bytes.copyWithin(to, from);
  to += bytes.length - from;
  bytes.fill(SPACE, to);
  return bytes.subarray(0, to);
}

function spliceCopy(bytes: Buffer, places: readonly Place[]): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (const place of places) {
    parts.push(bytes.subarray(from, place.at), place.token);
    from = place.end;
  }
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

/**
 * `texts` by their lengths; null when one is given twice. Looked up by length, then compared: a
 * string is hashed character by character to be a key of a Map or a Set.
 */
function byLength(texts: readonly string[]): Map<number, string[]> | null {
  const map = new Map<number, string[]>();
  for (const text of texts) {
    const same = map.get(text.length);
    if (same === undefined) map.set(text.length, [text]);
    else if (same.includes(text)) return null;
    else same.push(text);
  }
  return map;
}

/** How many strings `root` holds, keys included; -1 when one of them is in `excluded`. */
function countStrings(root: unknown, excluded: ReadonlyMap<number, readonly string[]>): number {
  const isExcluded = (s: string): boolean => excluded.get(s.length)?.includes(s) === true;
  let count = 0;
  // A stack of its own: a parse may nest deeper than the call stack goes.
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (isExcluded(value)) return -1;
      count++;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const key of Object.keys(value)) {
        if (isExcluded(key)) return -1;
        count++;
        stack.push((value as Record<string, unknown>)[key]);
      }
    }
  }
  return count;
}

/**
 * Where each string of `raw` (valid JSON) begins: the offsets of their opening quotes, in order.
 * Read as Latin-1, one character per byte, so that the string search builtin finds the quotes:
 * it runs several times faster than a loop over the bytes.
 */
function stringStarts(raw: Buffer): number[] {
  const text = raw.toString('latin1');
  const starts: number[] = [];
  for (let open = text.indexOf('"'); open >= 0; ) {
    starts.push(open);
    let close = text.indexOf('"', open + 1);
    while (close >= 0 && isEscaped(text, close)) close = text.indexOf('"', close + 1);
    if (close < 0) break;
    open = text.indexOf('"', close + 1);
  }
  return starts;
}

/** Whether the quote at `at`, inside a string, is escaped: an odd number of backslashes before it. */
function isEscaped(text: string, at: number): boolean {
  let before = at - 1;
  while (text.charCodeAt(before) === BACKSLASH) before--;
  return (at - 1 - before) % 2 === 1;
}

/** Whether `value` is in `sorted`, an ascending array. */
function includesSorted(sorted: readonly number[], value: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = sorted[mid]!;
    if (at === value) return true;
    if (at < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}
