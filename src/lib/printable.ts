/**
 * Text from a file or a path made safe to print on a terminal: control characters (C0, DEL, C1),
 * zero-width and bidirectional controls shown as `\u{…}` escapes, so a file name or a line cannot
 * move the cursor, hide itself or reorder what is shown around it.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}
