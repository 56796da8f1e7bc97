/**
 * Runs of characters at the end of a text, read backwards from the end, in the run's length. An
 * expression anchored only at the end (`/\/+$/`, `/\S*$/`) is tried at every position of the text
 * and backtracks over every run it meets: quadratic in what untrusted text can make it read.
 */

const WHITESPACE = /\s/;

/** Where the run of UTF-16 units ending at `end` for which `inRun` holds starts, no lower than `floor`. */
export function trailingRunStart(text: string, inRun: (unit: number) => boolean, end = text.length, floor = 0): number {
  let at = end;
  while (at > floor && inRun(text.charCodeAt(at - 1))) at--;
  return at;
}

/** `\s` for one UTF-16 unit: ASCII by its code, the rest (no-break and other spaces) by the expression. */
export function isWhitespace(unit: number): boolean {
  if (unit < 0x80) return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d);
  return WHITESPACE.test(String.fromCharCode(unit));
}

const SLASH = 0x2f;

/** A base URL without the slashes it ends with, so paths can be appended to it. */
export function withoutTrailingSlashes(url: string): string {
  return url.slice(0, trailingRunStart(url, (unit) => unit === SLASH));
}
