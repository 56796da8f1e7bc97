/**
 * Byte classes and the boundary checks RE2 cannot express (it has no lookaround). Offsets are
 * into the scanned UTF-8 bytes; a byte outside them reads as `undefined`, a boundary.
 */

export const SPACE = 0x20;
export const PLUS = 0x2b;
export const AT = 0x40;

export function isDigit(byte: number | undefined): boolean {
  return byte !== undefined && byte >= 0x30 && byte <= 0x39;
}

export function isLetter(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a));
}

/** ASCII letters, digits and `_`: what `\b` in RE2 treats as word characters. */
export function isWordByte(byte: number | undefined): boolean {
  return isDigit(byte) || isLetter(byte) || byte === 0x5f;
}

/** Characters that glue tokens into one: `2024-0042`, `1.4111…`, `v1/4111…`. */
function isJoiner(byte: number | undefined): boolean {
  return byte === 0x2d || byte === 0x2e || byte === 0x2f;
}

/**
 * Nothing glues a span starting at `start` to what precedes it: no word character right before,
 * nor one joiner away (so `4111…` in `id-4111…` or `0.4111…` is not a token of its own).
 */
export function freeBefore(bytes: Uint8Array, start: number): boolean {
  const before = bytes[start - 1];
  return !isWordByte(before) && !(isJoiner(before) && isWordByte(bytes[start - 2]));
}

/** Nothing glues a span ending at `end` to what follows it (`4111…x`, `4111….5`). */
export function freeAfter(bytes: Uint8Array, end: number): boolean {
  const after = bytes[end];
  return !isWordByte(after) && !(isJoiner(after) && isWordByte(bytes[end + 1]));
}

/** A space-separated number starting at `start` continues a run of them (`12 34 56 78 90 12`). */
export function spacedDigitsBefore(bytes: Uint8Array, start: number): boolean {
  return bytes[start - 1] === SPACE && isDigit(bytes[start - 2]);
}

/** A space-separated number ending at `end` is continued by more (`… 56 78 90 12`). */
export function spacedDigitsAfter(bytes: Uint8Array, end: number): boolean {
  return bytes[end] === SPACE && isDigit(bytes[end + 1]);
}

/** First offset after `start` that is not inside the word starting at `start` (at least start + 1). */
export function skipWord(bytes: Uint8Array, start: number): number {
  let offset = start + 1;
  while (offset < bytes.length && isWordByte(bytes[offset])) offset++;
  return offset;
}
