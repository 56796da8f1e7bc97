import { memoize } from '../../lib/memo.js';

/**
 * A rule's `svc_programs` declaration (abi.ts) and the test that lets the host skip the rule on a
 * tool call. A shell splits a command line into words only by taking characters out: quotes, the
 * backslash of an escape, a backslash-newline. So every word the SDK's splitter makes of an
 * argument, and every program name inside such a word, is a run of the argument's text once those
 * characters are out; a name found nowhere so cannot be a program the call runs.
 */

export const MAX_PROGRAMS = 64;
export const MAX_PROGRAM_CHARS = 64;
/** The longest declaration read: every name at its longest, commas between, as UTF-16. */
export const MAX_DECLARATION_BYTES = MAX_PROGRAMS * (MAX_PROGRAM_CHARS + 1) * 2;

/** A name is printable ASCII with no blank, and none of the characters quoting takes out, or a comma. */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;
const NOT_IN_A_NAME = /["',\\]/;
/** What quoting and line continuations may put between a word's characters. */
const QUOTING = String.raw`[\\'"\r\n]*`;

/** The programs a rule judges the commands of, and the test of whether a call's text may run one. */
export class Programs {
  readonly names: readonly string[];
  private readonly pattern: RegExp;

  /** From the declaration's text (names apart by commas); throws a message saying what is wrong with it. */
  constructor(declared: string) {
    const names = declared.split(',');
    if (names.length > MAX_PROGRAMS) throw new Error(`it declares ${names.length} programs, over the ${MAX_PROGRAMS} allowed`);
    for (const name of names) {
      if (name.length > MAX_PROGRAM_CHARS || !PRINTABLE_ASCII.test(name) || NOT_IN_A_NAME.test(name)) {
        throw new Error(
          `it declares the program ${JSON.stringify(name.slice(0, MAX_PROGRAM_CHARS + 1))}: a name is 1 to ${MAX_PROGRAM_CHARS} printable ASCII characters, no blank, quote, backslash or comma`,
        );
      }
    }
    this.names = [...new Set(names)];
    // `rm` becomes r[quoting]*m: the name with quoting allowed between its characters, ignoring case.
    const alternatives = this.names.map((name) => [...name].map((c) => c.replace(/[\^$.*+?()[\]{}|/]/, '\\$&')).join(QUOTING));
    this.pattern = new RegExp(alternatives.join('|'), 'iu');
  }

  /** Whether one of the names occurs in `text`, quoting taken out, ignoring case. */
  occurIn(text: string): boolean {
    return this.pattern.test(text);
  }
}

/** Declarations kept by their text: a set of rules rarely declares more. */
const KEPT_DECLARATIONS = 256;

/**
 * The Programs of a declaration's text: one object for each text, so a call's test of it is made
 * once however many rules declare it (Subject.mayRun remembers the answer by the object). Throws
 * as the constructor does.
 */
export const declaredPrograms: (declared: string) => Programs = memoize((declared) => new Programs(declared), KEPT_DECLARATIONS);

/**
 * The texts besides the arguments as emitted that a tool call's commands can come from, given its
 * JSON arguments parsed: the JSON text of each argument that is not a string (what the SDK's
 * `argument` answers for it) and, when the emitted text has escapes that make them differ from it,
 * every string and key in the arguments. Null when they cannot all be made (an argument nested too
 * deep for JSON text): the call may then run anything.
 */
export function derivedTexts(emitted: string, args: Record<string, unknown>): string[] | null {
  const texts: string[] = [];
  for (const value of Object.values(args)) {
    if (typeof value === 'string') continue;
    const json = jsonText(value);
    if (json === null) return null;
    texts.push(json);
  }
  if (!emitted.includes('\\')) return texts;
  const pending: unknown[] = [args];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) for (const item of value) pending.push(item);
    else if (typeof value === 'object' && value !== null) for (const [key, inner] of Object.entries(value)) pending.push(key, inner);
  }
  return texts;
}

function jsonText(value: unknown): string | null {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return null;
  }
}
