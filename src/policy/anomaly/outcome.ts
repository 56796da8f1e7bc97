import { memoize } from '../../lib/memo.js';
import { maskVolatile } from './volatile.js';

/**
 * What a tool result says, for comparing one pass with the next. Two results are the same
 * outcome when their masked texts match, or when they keep the same numbers and status words in
 * the same order and share most of their words: a counter that moved, an offset that advanced,
 * a status that changed or a failure count that fell is progress, whatever else stayed put.
 */
export interface Outcome {
  /** The compared part of the result, volatile details masked. */
  readonly text: string;
  readonly words: ReadonlySet<string>;
  /** The numbers and status words, in order. */
  readonly marks: string;
  /** The lines that report a failure (masked), or '' when none does. */
  readonly failure: string;
  readonly failureWords: ReadonlySet<string>;
}

/** Runners print their summary last: the head and the tail of a long result are compared. */
const HEAD_CHARS = 2048;
const TAIL_CHARS = 1024;
/** Word-set overlap (Jaccard) above which two results with the same marks are one outcome. */
const SAME_WORDS = 0.8;

const TOKEN = /‹\w+›|\d+(?:\.\d+)?|[\p{L}_]+|[✓✔✗✘✕]/gu;
const NUMBER = /^\d/;
const STATUS = new Set(
  'queued pending waiting running starting started in_progress progress ready completed complete success succeeded successful failure failed failing fail passed passing pass done ok error errors up down healthy unhealthy crashloopbackoff containercreating terminating terminated available unavailable refused connected skipped cancelled canceled timeout ✓ ✔ ✗ ✘ ✕'.split(' '),
);
const FAILURE_LINE = /exit (?:code|status):? [1-9]|error|exception|fail|assert|expected|received|panick|denied|refused|not found|no such|cannot|can't|couldn't|unable|traceback|invalid|undefined|missing|conflict|timed? ?out|abort/i;

/** A harness's empty report field (Gemini CLI's `Error: (none)`) is no failure. */
const NOTHING = /:\s*\(none\)\s*$/;

function wordsAndMarks(text: string): { words: Set<string>; marks: string } {
  const words = new Set<string>();
  let marks = '';
  for (const token of text.toLowerCase().match(TOKEN) ?? []) {
    words.add(token);
    if (NUMBER.test(token) || STATUS.has(token)) marks += `${token} `;
  }
  return { words, marks };
}

/** A harness echoing the command it ran (Gemini CLI's `Command: …`): the arguments are compared apart. */
const ECHOED_COMMAND = /^(?:Command: |\$ )[^\n]*\n/;

/**
 * Outcomes of the results last read, by their compared text (at most HEAD_CHARS + TAIL_CHARS + 1):
 * an agent sends its whole history again with every request, so all but the newest results have
 * been read before. Outcomes are never changed once made, so one may be shared. At most about
 * 1,024 × 12 KB is kept (the text read, its masked copy, its words), most often far less.
 */
const REMEMBERED_OUTCOMES = 1024;

export function outcomeOf(raw: string): Outcome {
  const result = raw.replace(ECHOED_COMMAND, '');
  return outcomeOfKept(result.length > HEAD_CHARS + TAIL_CHARS ? `${result.slice(0, HEAD_CHARS)}\n${result.slice(-TAIL_CHARS)}` : result);
}

const outcomeOfKept = memoize((kept: string): Outcome => {
  const text = maskVolatile(kept);
  const failure = text
    .split('\n')
    .filter((line) => FAILURE_LINE.test(line) && !NOTHING.test(line))
    .join('\n');
  const all = wordsAndMarks(text);
  return { text, words: all.words, marks: all.marks, failure, failureWords: wordsAndMarks(failure).words };
}, REMEMBERED_OUTCOMES);

/** Jaccard overlap of two word sets. */
export function overlap(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const w of small) if (large.has(w)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Whether two results say the same thing: nothing moved between them. */
export function sameOutcome(a: Outcome, b: Outcome): boolean {
  return a.text === b.text || (a.marks === b.marks && overlap(a.words, b.words) >= SAME_WORDS);
}

/**
 * Whether two results report the same failure (both must report one) with the same numbers and
 * statuses around it: a failure that stays while a count moves (`1 of 3 replicas available`,
 * `4 failed` → `2 failed`) is progress.
 */
export function sameFailure(a: Outcome, b: Outcome): boolean {
  if (a.failure === '' || b.failure === '' || a.marks !== b.marks) return false;
  return a.failure === b.failure || overlap(a.failureWords, b.failureWords) >= SAME_WORDS;
}
