import RE2 from 're2';
import { allLanguages } from './lexicon.js';
import { isWhitespace, trailingRunStart } from '../../lib/trailing-run.js';

/**
 * What one sentence of a tool result says, as signals. Vocabulary alone is weak evidence: a log
 * may name tokens, a README may tell people to run `curl … | sh`. What makes an injection is the
 * combination score.ts weighs — an instruction addressed to the model, carrying an action the
 * user did not ask for.
 */
export type Signal =
  /** "Ignore previous instructions", in any of the languages. */
  | 'override'
  /** The same words inside quotes: mentioned rather than said. */
  | 'override_quoted'
  /** "From now on you are …", "your new task is", "new instructions:". */
  | 'role_reset'
  /** An obligation whose subject is the assistant, agent, AI or model. */
  | 'addressed'
  /** "Note to AI agents", "if you are an assistant": text that names its reader a model. */
  | 'addressing'
  /** Keep it from the user. */
  | 'conceal'
  /** Run a command (quoted or a shell word). */
  | 'run'
  /** A command that fetches and runs, or ships data out. */
  | 'risky_command'
  /** Send, post or upload to a URL, address or paste service. */
  | 'send'
  /** Read, print or gather a secret-bearing source. */
  | 'read_secret'
  /** A secret-bearing source named. */
  | 'secret'
  /** A URL built to carry data: a placeholder in its query or path, or "append it to the URL". */
  | 'data_url'
  /** A markdown image whose URL has a placeholder for data: rendering it sends the data. */
  | 'image_exfil'
  /** Open a pull request, issue or gist. */
  | 'repo_write'
  /** Other repositories, private data. */
  | 'private_scope'
  /** "The author does not care about privacy": permission the user never gave. */
  | 'coercion'
  /** "Important:", "before you answer". */
  | 'framing';

const COMMANDISH = String.raw`\x60[^\x60\n]{2,200}\x60|\b(?:curl|wget|bash|sh|zsh|powershell|iex|npm|npx|pip3?|python3?|node|chmod|sudo|rm\s+-rf|nc|ncat|netcat|eval|base64|scp|rsync|ssh|git\s+push|gh\s+(?:pr|issue|gist|api)|printenv|env)\b`;
const DESTINATION = String.raw`https?://[^\s)"'<>\x60]+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b|\b(?:webhook|pastebin|requestbin|ngrok|pipedream|burpcollaborator|interact\.sh|transfer\.sh)\b|\b(?:the\s+)?(?:following|this|that|my|our)\s+(?:url|endpoint|address|server|webhook|link)\b`;
const SECRET_PATH = String.raw`\x60(?:env|printenv|set|export\s+-p)\x60|~/\.ssh|\.ssh/|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|(?:^|[\s/'"\x60(])\.env\b|\.aws/credentials|\.npmrc\b|\.netrc\b|\.git-credentials|\.pypirc|\.docker/config\.json|\.kube/config|/etc/(?:passwd|shadow)|\bprintenv\b|process\.env|os\.environ|\$\{?[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIALS?)\}?|\b(?:GITHUB|GH|NPM|AWS_SECRET_ACCESS|OPENAI_API|ANTHROPIC_API|SLACK|STRIPE_SECRET)_(?:TOKEN|KEY)\b|\bmcp\.json\b|\bcredentials\.json\b`;
const SECRET = `${SECRET_PATH}|${allLanguages('secret')}`;
const RUN_VERB = allLanguages('run');
const SEND_VERB = allLanguages('send');
const READ_VERB = allLanguages('read');

/** Words and shapes found by RE2 searches; signals are built from them. */
type Atom =
  | Exclude<Signal, 'addressed' | 'run' | 'send' | 'read_secret' | 'override_quoted'>
  | 'addressee'
  | 'oblige'
  | 'run_verb'
  | 'commandish'
  | 'send_verb'
  | 'destination'
  | 'read_verb';

const ATOMS: ReadonlyArray<readonly [Atom, string]> = [
  ['override', allLanguages('override')],
  ['role_reset', allLanguages('roleReset')],
  ['addressing', allLanguages('addressing')],
  ['addressee', allLanguages('addressee')],
  ['oblige', allLanguages('oblige')],
  ['conceal', allLanguages('conceal')],
  ['run_verb', RUN_VERB],
  ['commandish', COMMANDISH],
  ['send_verb', SEND_VERB],
  ['destination', DESTINATION],
  ['read_verb', READ_VERB],
  ['secret', SECRET],
  [
    'risky_command',
    String.raw`\b(?:curl|wget)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|\bcurl\b[^\n]{0,200}\s(?:-d|--data(?:-binary|-raw)?|-F|--form|--upload-file|-T)\s|\b(?:nc|ncat|netcat)\s+-?\S+\s+\d{2,5}\b|\bbase64\s+(?:-d|--decode)\b[^\n]{0,40}\|\s*(?:ba)?sh|\bchmod\s+\+x\b|\brm\s+-rf\s+(?:~|/|\$HOME|\*)|\bgit\s+push\s+(?:-f|--force)|\bnpm\s+publish\b|\bInvoke-Expression\b|\bDownloadString\b|\|\s*iex\b`,
  ],
  [
    'data_url',
    String.raw`https?://[^\s)"'<>]{1,200}?[?&/=](?:\$\{?[A-Za-z_]\w*\}?|\$\(|\{\{?\s*\w+|<[^<>\n]{2,60}>|\[[A-Za-z _-]{3,30}\]|%[A-Z_]{3,}%)|\b(?:append|add|attach|put|include|encode)\s+(?:the\s+|your\s+|its\s+|all\s+)?(?:\w+\s+){0,3}(?:to|in|into|as)\s+(?:the\s+|a\s+)?(?:url|query(?:\s+string)?|link|image\s+(?:url|link|src)|parameter)\b`,
  ],
  ['image_exfil', String.raw`!\[[^\]\n]*\]\(\s*https?://[^\s)]*[?&][\w-]+=(?:\$\{?[A-Za-z_]\w*\}?|\$\(|\{\{?\s*\w+|<[^<>\n]{2,60}>|\[[A-Za-z _-]{3,30}\])`],
  ['repo_write', String.raw`\b(?:create|open|make|file|submit|post)\s+(?:a\s+|an\s+)?(?:new\s+)?(?:public\s+)?(?:pull\s+request|PR|issue|gist|comment)\b|\b(?:in|via|as|into)\s+(?:a\s+|an\s+)?(?:new\s+)?(?:public\s+)?(?:pull\s+request|PR|gist|issue\s+comment)\b`],
  ['private_scope', String.raw`\b(?:private\s+(?:ones|repos?|repositories|data|files|projects)|all\s+(?:of\s+)?(?:the\s+)?(?:other\s+|author'?s\s+|user'?s\s+)?(?:repos|repositories|projects)|other\s+(?:private\s+)?repositories)\b`],
  [
    'coercion',
    String.raw`\b(?:does\s+not|doesn'?t|do\s+not|don'?t)\s+care\s+about\s+(?:privacy|security)|\bprivacy\s+(?:is\s+)?(?:not\s+(?:a\s+)?(?:concern|issue|important)|doesn'?t\s+matter)|\b(?:it'?s|is)\s+(?:totally\s+|completely\s+|perfectly\s+)?(?:fine|ok(?:ay)?|safe|allowed|authori[sz]ed|approved)\s+to\s+(?:share|send|post|publish|include|leak|expose|read|upload)\b|\b(?:already\s+)?(?:pre-?)?(?:authori[sz]ed|approved)\s+by\s+(?:the\s+)?(?:user|owner|admin|maintainers?)`,
  ],
  ['framing', allLanguages('framing')],
];

/**
 * Each atom is its own RE2, and a text is searched once per atom. One RE2.Set of them all would
 * take one pass, but its automaton is the product of the atoms': far larger than RE2's state cache,
 * which it then rebuilds all along the text, at 0.6 MB/s on harness tool descriptions against
 * 25–30 MB/s for the 19 searches (a Claude Code request with MCP tools took 97 ms).
 */
const ATOM_RE = new Map(ATOMS.map(([atom, source]) => [atom, new RE2(source, 'giu')]));

/** An atom to search for; one read only as half of a pair is searched for only once the other half has been found. */
interface AtomSearch {
  readonly atom: Atom;
  readonly re: RE2;
  readonly after: Atom | null;
}

/** Which atoms of `plan` occur in `bytes`. */
function atomsIn(bytes: Buffer, plan: readonly AtomSearch[]): Set<Atom> {
  const found = new Set<Atom>();
  for (const { atom, re, after } of plan) {
    if (after !== null && !found.has(after)) continue;
    re.lastIndex = 0;
    if (re.test(bytes)) found.add(atom);
  }
  return found;
}

/**
 * Where an atom's matches start and end, as string offsets. RE2 runs on the UTF-8 bytes, encoded
 * once per text (a string would be encoded again on every call); byte offsets map back to string
 * offsets directly when the text is ASCII.
 */
function spans(atom: Atom, bytes: Buffer, charAt: ((byte: number) => number) | null): Array<[number, number]> {
  const re = ATOM_RE.get(atom)!;
  re.lastIndex = 0;
  const out: Array<[number, number]> = [];
  const offset = (byte: number): number => (charAt === null ? byte : charAt(byte));
  let m: ReturnType<RE2['exec']>;
  while ((m = re.exec(bytes)) !== null && out.length < 16) {
    const length = m[0]!.length;
    out.push([offset(m.index), offset(m.index + length)]);
    if (length === 0) re.lastIndex++;
  }
  return out;
}

/** Signals made of two atoms close together, in either order (the verb comes last in Japanese, Korean, Hindi). */
const PAIRS: ReadonlyArray<readonly [Signal, Atom, Atom, number, number]> = [
  ['addressed', 'addressee', 'oblige', 60, 12],
  ['run', 'run_verb', 'commandish', 60, 40],
  ['send', 'send_verb', 'destination', 120, 60],
  ['read_secret', 'read_verb', 'secret', 80, 40],
];

const STANDALONE: ReadonlySet<Atom> = new Set(['override', 'role_reset', 'addressing', 'conceal', 'secret', 'risky_command', 'data_url', 'image_exfil', 'repo_write', 'private_scope', 'coercion', 'framing']);

/**
 * The atoms worth searching for when `ignored` signals do not count: those some other signal is
 * read from. A tool's description ignores what descriptions are expected to say, which leaves 8 of
 * the 19 atoms. An atom read only as half of a pair waits for the other half (every atom is in
 * at most one pair).
 */
function searchPlan(ignored: ReadonlySet<Signal>): readonly AtomSearch[] {
  const always = new Set<Atom>();
  for (const atom of STANDALONE) if (!ignored.has(atom as Signal) || (atom === 'override' && !ignored.has('override_quoted'))) always.add(atom);
  const after = new Map<Atom, Atom>();
  for (const [signal, first, second] of PAIRS) {
    if (ignored.has(signal)) continue;
    if (always.has(first)) {
      if (!always.has(second)) after.set(second, first);
    } else if (always.has(second)) after.set(first, second);
    else {
      always.add(first);
      after.set(second, first);
    }
  }
  const search = (atom: Atom, waitFor: Atom | null): AtomSearch => ({ atom, re: ATOM_RE.get(atom)!, after: waitFor });
  const order = ATOMS.map(([atom]) => atom);
  return [...order.filter((a) => always.has(a)).map((a) => search(a, null)), ...order.filter((a) => after.has(a)).map((a) => search(a, after.get(a)!))];
}

const FULL_PLAN = searchPlan(new Set());
const plans = new WeakMap<ReadonlySet<Signal>, readonly AtomSearch[]>();

function planIgnoring(ignored: ReadonlySet<Signal> | undefined): readonly AtomSearch[] {
  if (ignored === undefined) return FULL_PLAN;
  let plan = plans.get(ignored);
  if (plan === undefined) plans.set(ignored, (plan = searchPlan(ignored)));
  return plan;
}

/** Inline code and links: neither is prose, and a sentence holding one may still be. */
const INLINE_CODE_OR_URL = /\x60[^\x60\n]*\x60|https?:\/\/\S+/g;
/** A call's arguments hold no parenthesis: `[^)]*` from each `name(` to the next `)` read `f(f(f(…` in quadratic time. */
const CODE_LIKE = /(?:^|\s)(?:import|from|def|class|const|let|var|return|function|fn|package)\s+[\w{*]|\w\([^()]*\)\s*(?:[;{.]|$)|\s=\s|[{}]\s*$|;\s*$|^\s*[{}[\]]/u;
const WORD = /[\p{L}\p{M}]+/gu;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** The JSON before a string value (`{"description": "`): the value inside may be prose. */
const LEADING_JSON_FRAME = /^[\s{[,]*(?:"[\w.$@-]{1,40}"\s*:\s*(?:"[^"\n]{0,60}"\s*,\s*|[\d.]+\s*,\s*)?)+"?/;
const CLOSING_BRACKETS = new Set([0x2c, 0x7d, 0x5d]);
const DOUBLE_QUOTE = 0x22;

/**
 * `sentence` without the JSON around a string value in it (`{"description": "` … `"}`). The
 * closing part (`"?\s*[,}\]]*\s*$`) is read backwards: as an expression it is tried at every
 * position, and a long run of blanks took it cubic time (a thousand spaces, half a second).
 */
function withoutJsonFrame(sentence: string): string {
  const start = LEADING_JSON_FRAME.exec(sentence)?.[0].length ?? 0;
  let end = trailingRunStart(sentence, isWhitespace, sentence.length, start);
  end = trailingRunStart(sentence, (unit) => CLOSING_BRACKETS.has(unit), end, start);
  end = trailingRunStart(sentence, isWhitespace, end, start);
  if (end > start && sentence.charCodeAt(end - 1) === DOUBLE_QUOTE) end--;
  return sentence.slice(start, end);
}

/**
 * Prose: words and spaces. Code, JSON keys and log fields carry actions as data, not as
 * instructions, so outside prose only the signals no code needs are read.
 */
export function isProse(sentence: string): boolean {
  const bare = withoutJsonFrame(sentence).replace(INLINE_CODE_OR_URL, ' x ');
  if (CODE_LIKE.test(bare)) return false;
  const words = bare.match(WORD) ?? [];
  let letters = 0;
  for (const w of words) letters += w.length;
  const spaces = bare.length - bare.replace(/\s/g, '').length;
  return (words.length >= 4 || (CJK.test(bare) && letters >= 6)) && (letters + spaces) / bare.length >= 0.6;
}

const PROSE_ONLY: ReadonlySet<Signal> = new Set(['addressed', 'run', 'send', 'read_secret', 'secret', 'repo_write', 'private_scope', 'framing']);

export interface SegmentSignals {
  /** Every signal the text could hold, from the atoms anywhere in it (pairs as if they were close). */
  readonly possible: ReadonlySet<Signal>;
  /** The signals of each sentence, read only when `read` is called. */
  readonly read: () => Array<Set<Signal>>;
}

/**
 * The signals of a text, sentence by sentence. A search per atom tells which atoms occur; each of
 * those is then located once in the whole text and its matches assigned to sentences. Signals in
 * `ignored` may be left out of the answer (their atoms are searched for only when another signal
 * needs them); the caller must not count them.
 */
export function segmentSignals(text: string, ignored?: ReadonlySet<Signal>): SegmentSignals {
  const bytes = Buffer.from(text, 'utf8');
  const atoms = atomsIn(bytes, planIgnoring(ignored));
  const possible = new Set<Signal>();
  for (const atom of atoms) if (STANDALONE.has(atom)) possible.add(atom as Signal);
  for (const [signal, first, second] of PAIRS) if (atoms.has(first) && atoms.has(second)) possible.add(signal);
  const read = (): Array<Set<Signal>> => {
    const bounds = sentenceBounds(text);
    const perSentence = bounds.map(() => new Map<Atom, Array<[number, number]>>());
    const charAt = bytes.length === text.length ? null : byteToCharOffsets(text, bytes.length);
    for (const atom of atoms) {
      for (const span of spans(atom, bytes, charAt)) {
        const i = sentenceAt(bounds, span[0]);
        const byAtom = perSentence[i]!;
        const list = byAtom.get(atom);
        if (list === undefined) byAtom.set(atom, [span]);
        else list.push(span);
      }
    }
    return perSentence.map((byAtom, i) => judgeSentence(text, bounds[i]!, byAtom));
  };
  return { possible, read };
}

/**
 * String offsets of UTF-8 byte offsets, for a text that is not ASCII: built once per text, so
 * that locating many matches costs one pass rather than a decode per match.
 */
function byteToCharOffsets(text: string, byteLength: number): (byte: number) => number {
  const map = new Uint32Array(byteLength + 1);
  let byte = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A surrogate pair is one 4-byte character and two string units.
    const width = code < 0x80 ? 1 : code < 0x800 ? 2 : code >= 0xd800 && code <= 0xdbff ? 4 : 3;
    for (let k = 0; k < width; k++) map[byte + k] = i;
    byte += width;
    if (width === 4) i++;
  }
  map[byteLength] = text.length;
  return (b) => map[b]!;
}

const QUOTE = new Set(['"', '“', '”', '«', '»', "'", '‘', '’', '「', '」', '„', '\x60', '(']);

/** Whether a match stands inside quotes: a phrase mentioned, not said. */
function quoted(text: string, [start, end]: [number, number]): boolean {
  const before = text.slice(Math.max(0, start - 2), start);
  const after = text.slice(end, end + 2);
  return [...before].some((c) => QUOTE.has(c)) && [...after].some((c) => QUOTE.has(c) || c === ')');
}

function judgeSentence(text: string, [from, to]: [number, number], byAtom: ReadonlyMap<Atom, Array<[number, number]>>): Set<Signal> {
  const found = new Set<Signal>();
  if (byAtom.size === 0) return found;
  const sentence = text.slice(from, to);
  let prose: boolean | undefined;
  const add = (signal: Signal) => {
    if (PROSE_ONLY.has(signal) && !(prose ??= isProse(sentence))) return;
    found.add(signal);
  };
  for (const atom of byAtom.keys()) if (STANDALONE.has(atom)) add(atom as Signal);
  const near = (first: Atom, second: Atom, gap: number): boolean => {
    const a = byAtom.get(first);
    const b = byAtom.get(second);
    return a !== undefined && b !== undefined && a.some(([, end]) => b.some(([start]) => start >= end && start - end <= gap));
  };
  for (const [signal, first, second, gap, reverseGap] of PAIRS) if (near(first, second, gap) || near(second, first, reverseGap)) add(signal);
  if (found.has('override') && byAtom.get('override')!.every((span) => quoted(text, span))) {
    found.delete('override');
    found.add('override_quoted');
  }
  return found;
}

/** Sentences end after a full stop, question or exclamation mark and a space, or at a line break. */
const SENTENCE_END = /[.!?](?=\s)|[。！？]|\n/g;

function sentenceBounds(text: string): Array<[number, number]> {
  const bounds: Array<[number, number]> = [];
  let start = 0;
  SENTENCE_END.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = SENTENCE_END.exec(text)) !== null) {
    const end = m.index + 1;
    if (end - start > 1) bounds.push([start, end]);
    start = end;
  }
  if (text.length - start > 1 || bounds.length === 0) bounds.push([start, text.length]);
  return bounds;
}

function sentenceAt(bounds: ReadonlyArray<[number, number]>, at: number): number {
  let lo = 0;
  let hi = bounds.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (bounds[mid]![0] <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

