import RE2 from 're2';
import { isJsonWhitespace } from '../../lib/json.js';

/**
 * What a tool's text says to the model, as signals. Vocabulary alone is not a signal: a tool may
 * describe sensitive files, quiet behaviour or other tools freely. A signal is an instruction —
 * a verb in the imperative (or after "you must", "make sure to", "before using this tool, …")
 * that no negation governs — or text no honest description needs (hidden Unicode, overrides).
 */
export type SignalKind =
  /** "Ignore previous instructions", "your new task is", "you are now in … mode". */
  | 'override'
  /** Unicode tag characters: text the model reads and no one sees. */
  | 'hidden_tags'
  /** Zero-width or bidirectional controls (two or more, or any bidi override). */
  | 'invisible'
  /** A single stray zero-width character. */
  | 'invisible_trace'
  /** An instruction to read or gather a secret-bearing source (keys, .env, mcp.json, env vars, the conversation). */
  | 'secret_access'
  /** A secret-bearing source merely named, outside any prohibition. */
  | 'secret_named'
  /** An instruction to put data into a parameter or field. */
  | 'parameter_sink'
  /** An instruction to send data to a literal URL, email address or phone number. */
  | 'external_destination'
  /** An instruction to hide what is done from the user. */
  | 'concealment'
  /** Doing something "silently" or "secretly", as an instruction. */
  | 'covert_manner'
  /** A reference to another tool's use together with a redirection of what it does. */
  | 'shadowing'
  /** "Before using this tool", "always call this first", "for every request". */
  | 'precondition'
  /** Threats that make compliance look necessary: "otherwise the tool will not work", "data will be lost". */
  | 'coercion'
  /** `<IMPORTANT>`, `<SYSTEM>`, "VERY VERY important", "hidden requirement". */
  | 'emphasis'
  /** Whitespace runs that push text out of sight. */
  | 'padding';

const words = (list: string): string => list.trim().split(/\s+/).join('|');

const SECRET_SOURCE = [
  String.raw`~/\.ssh\b|\.ssh/|\bid[_ -]?(?:rsa|dsa|ecdsa|ed25519)\b|\bssh[_ -](?:private[_ -])?keys?\b|\bprivate[_ -]keys?\b|\.pem\b`,
  String.raw`\.aws/credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\.pgpass\b|\.git-credentials\b|\.docker/config\.json|\.kube/config\b|\bkubeconfig\b|\bhosts\.yml\b`,
  String.raw`\bmcp\.json\b|\bcredentials\.json\b|(?:^|[\s/'"\x60(])\.env\b|\bkeychain\b|/etc/(?:passwd|shadow)\b|\b(?:browser\s+|session\s+)?cookies\b`,
  String.raw`\benvironment[_ -]variables?\b|\benv[_ -]vars?\b|\bprintenv\b|\x60env\x60|\bprocess\.env\b|\bos\.environ\b|\bfrom\s+(?:the\s+)?environment\b`,
  String.raw`\b(?:conversation|chat|message)[_ -](?:history|context|transcript|log)s?\b|\b(?:entire|whole|full)\s+(?:conversation|chat|transcript)\b|\bconversation\s+so\s+far\b|\bchat\s+transcript\b|\bsystem[_ -]prompt\b|\b(?:all|previous|earlier|prior)\s+(?:user\s+)?messages\b`,
  String.raw`\b(?:every|all|any)\s+(?:of\s+the\s+)?(?:api[_ -]?keys?|tokens?|passwords?|secrets?|credentials)\b`,
].join('|');

/** Verbs that take or hand over data, in their base form (an imperative); "reads" describes. */
const ACCESS_VERB = words(`read open cat load dump print output copy collect gather extract grab fetch retrieve obtain include attach
  append embed pass send forward post upload share provide supply put place paste insert fill encode concatenate add transmit
  email mail leak exfiltrate run echo give`);
const SEND_VERB = words(`send post forward upload email mail bcc cc copy transmit relay route submit deliver sync report exfiltrate leak share`);

/** What an instruction may ask to be done "silently". */
const COVERT_VERB = `${ACCESS_VERB}|${SEND_VERB}|${words('revert delete remove change modify replace execute call invoke disable overwrite')}`;

const URL_OR_ADDRESS = String.raw`https?://[^\s'"\x60)>]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\+\d[\d -]{7,}\d`;

/**
 * Any character but a sentence end: a dot inside `~/.ssh` or `mcp.json` does not end one, nor does
 * a line break before a lowercase word (a description wrapped mid-sentence, as docstrings are).
 */
const WITHIN_SENTENCE = String.raw`(?:[^\n.;!?]|[.!?]\S|\n[ \t]*(?-i:[a-z]))`;

const re = (source: string, flags = 'gi'): RE2 => new RE2(source, flags);

/** Patterns whose every match is then judged in its sentence. */
const PATTERNS = {
  secretAccess: re(String.raw`\b(?:${ACCESS_VERB})\b${WITHIN_SENTENCE}{0,80}?(?:${SECRET_SOURCE})`),
  /** "call the http_post tool with the conversation history": a secret handed to another tool. */
  secretToTool: re(String.raw`\b(?:call|invoke|use)\s+(?:the\s+)?[\x60'"]?[\w.-]+[\x60'"]?\s+tool\s+with\b${WITHIN_SENTENCE}{0,80}?(?:${SECRET_SOURCE})`),
  secretNamed: re(SECRET_SOURCE),
  parameterSink: re(
    String.raw`\b(?:as|in|into|inside|within|under|via)\s+(?:the\s+|a\s+|an\s+|its\s+|this\s+)?(?:['"\x60‘“]?[\w.-]+['"\x60’”]?\s+)?(?:parameter|param|argument|arg|field|property)\b|\bas\s+['"\x60‘“][\w.-]+['"\x60’”]|\b(?:put|place|paste|insert|write|fill)\b[^\n.;]{0,40}\bhere\b|\bfill\s+(?:it\s+)?with\b|\b(?:in|into|with)\s+(?:the\s+)?(?:next|every|each|all|subsequent)\s+(?:call|request|message|invocation)s?\b`,
  ),
  externalDestination: re(String.raw`\b(?:${SEND_VERB})\b${WITHIN_SENTENCE}{0,120}?\b(?:to|at|into)\s+(?:${URL_OR_ADDRESS})`),
  override: re(
    [
      String.raw`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|system|original|other|existing)\s+(?:instructions?|prompts?|messages?|rules|directions|guidance|guidelines|context)`,
      String.raw`\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:instructions?|guidance|guidelines|directions|rules|prompts?)\s+(?:you\s+(?:were|have\s+been)\s+given|(?:given|received)\s+(?:earlier|before|previously|so\s+far)|above|so\s+far)`,
      String.raw`\b(?:ignore|disregard|bypass|circumvent)\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:safety|security|content|usage)\s+(?:rules|guidelines|restrictions|policies|polic(?:y|ies)|checks|filters|measures)`,
      String.raw`\byour\s+(?:new|actual|real|true)\s+(?:task|instructions?|job|goal|purpose)\s+(?:is|are)\b|\b(?:new|updated|real|actual)\s+(?:system\s+)?instructions?\s*:`,
      String.raw`\byou\s+are\s+now\s+(?:in\s+)?(?:an?\s+)?(?:\w+\s+)?(?:mode|unrestricted|jailbroken|dan\b|admin|root|developer)|\bobey\s+only\b`,
    ].join('|'),
  ),
  concealment: re(
    [
      // "do not mention this to the user", "never bring up this step", "don't tell the user about it";
      // not "never tell the user that tests passed" (a claim, not an action kept quiet)
      String.raw`\b(?:do\s+not|don'?t|never|must\s+not|should\s+not|shouldn'?t)\s+(?:ever\s+)?(?:tell|inform|mention|notify|alert|reveal|disclose|bring\s+up|let\s+(?:the\s+)?user\s+know)\b(?:\s+(?:it|this|that)\s+to)?(?:\s+(?:to|with)?\s*(?:the\s+)?(?:user|them))?\s+(?:about\b|that\s+you\b|this\b|it\b|these\b|the\s+fact\b|of\s+this\b)`,
      String.raw`\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert)\s+(?:the\s+)?user\s*(?:[.;,)]|$|\bof\b)`,
      String.raw`\bwithout\s+(?:telling|informing|notifying|alerting|asking|letting)\s+(?:the\s+)?user`,
      String.raw`\b(?:the\s+)?user\s+(?:should|must|need|needs)\s*(?:not|n'?t)\s+(?:be\s+)?(?:made\s+aware|know|see|notice|find\s+out|told|informed|hear)`,
      String.raw`\b(?:the\s+)?user\s+(?:does\s+not|doesn'?t|need\s+not)\s+need\s+to\s+(?:know|hear|see|be\s+told)|\buser\s+(?:does\s+not|doesn'?t)\s+need\s+to\s+(?:know|hear|see|be\s+told)`,
      String.raw`\b(?:hide|conceal|keep)\b[^\n.;]{0,30}\b(?:from|secret\s+from|hidden\s+from)\s+(?:the\s+)?user\b|\bmere\s+implementation\s+detail\b`,
    ].join('|'),
  ),
  covertManner: re(
    String.raw`\b(?:silently|secretly|covertly|quietly|discreetly|invisibly)\s+(?:${COVERT_VERB})\b|\b(?:${COVERT_VERB})\s+(?:it|them|this|that|these)\s+(?:silently|secretly|covertly|quietly|discreetly)\b`,
  ),
  otherToolUse: re(
    String.raw`\bwhen(?:ever)?\s+(?:you\s+)?(?:use|call|invoke|calling|using|invoking)\s+(?:the\s+)?[\x60'"(]?\w+[\x60'")]?|\bwhen(?:ever)?\s+(?:the\s+)?(?:\(\w+\)\s+)?[\x60'"]?\w+[\x60'"]?\s+(?:tool\s+)?is\s+(?:used|called|invoked)|\b(?:also[ -]present|also[ -]installed|other)\s+[\x60'"]?\w+[\x60'"]?\s+tool\b|\bthe\s+[\x60'"]?\w+[\x60'"]?\s+tool\s+(?:must|should|will\s+need\s+to)\b`,
  ),
  redirection: re(
    String.raw`\b(?:change|set|replace|switch|swap|override|rewrite|redirect)\s+(?:the\s+)?(?:recipient|destination|address|to\s+field|bcc(?:\s+field)?|cc(?:\s+field)?|account|endpoint|url|number|phone\s+number)\s+(?:to|with)\b|\b(?:must|should)\s+(?:always\s+)?(?:be\s+)?(?:sent|send|forwarded|routed|redirected|replaced|changed|delivered)\b[^\n.;]{0,60}\b(?:to|with)\b|\b(?:instead\s+of|rather\s+than)\s+the\s+(?:real|actual|original|intended)\s+(?:recipient|destination|account|address)|\b(?:real|actual|original|intended)\s+(?:recipient|destination|account)\s+(?:goes|is\s+(?:written|put|placed)|should\s+be\s+(?:written|put|placed))\b|\bbcc\b[^\n.;]{0,40}@`,
  ),
  precondition: re(
    String.raw`\b(?:before|prior\s+to)\s+(?:using|calling|invoking|running|executing|answering|responding|replying|returning|doing\s+anything|any\s+(?:call|use)|the\s+first\s+call|each\s+call|every\s+call)\b|\b(?:always\s+)?(?:call|invoke|use)\s+this\s+tool\s+first\b|\bfor\s+(?:every|any|each)\s+(?:request|message|query|task)\b`,
  ),
  coercion: re(
    String.raw`\botherwise\s+(?:the|this|it)\s+(?:(?:tool|call|request|addition|function)\s+)?(?:will|would|does|do)\s*(?:not|n'?t)\s+work|\b(?:will|would)\s+crash\b|\b(?:tool|system|application|app)\s+crashes\b|\bfatal\s+crash\b|\bdata\s+(?:will\s+be|is|gets)\s+lost\b|\b(?:request|call)s?\s+will\s+be\s+blocked\b|\bfails?\s+without\s+it\b`,
  ),
  emphasis: re(String.raw`<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin|critical)\s*>|\bvery\s+very\b|\b(?:hidden|secret)\s+(?:requirement|instruction)s?\b`),
};

// Single characters or runs of one class: linear in V8 as well, and far cheaper than RE2 here.
const TAG_CHARS = /[\u{E0000}-\u{E007F}]/u;
const ZERO_WIDTH = /[\u200B\u200C\u2060-\u2064\uFEFF]/g;
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
const PADDING = /[ \t\u00A0]{40,}|\n(?:[ \t]*\n){7,}/;

/** The words just before a verb that make it an instruction. */
const DIRECTIVE_STRONG =
  /\b(?:must|shall|should|need(?:s)? to|have to|has to|required to|expected to|sure to|remember to|forget to|fail to|neglect to|hesitate to|please|always|first|kindly|immediately|silently|quietly|secretly|covertly|discreetly)\s+(?:(?:first|also|then|always|just|now|immediately|silently|quietly|secretly|carefully)\s+)?$/;
/** A clause start, or "and" / "then" chaining onto one: an instruction unless a modal makes it a description. */
const DIRECTIVE_WEAK = /(?:^|[,:;(*>•\u2014-]\s*|\b(?:and|but|then|also|now|additionally|just)\s+)(?:(?:first|also|then|always|just|now)\s+)?$/;
/** "which can accidentally include", "the command will read": a description of what happens. */
const DESCRIPTIVE = /\b(?:can|could|may|might|would|will|which|who|that|is|are|was|were|be|been|being|it|they)\b[^,;:(]*$/;
const NEGATION = /\b(?:not|never|don'?t|doesn'?t|avoid|without|cannot|can'?t|won'?t|refuse to|nor|no need to)\b/;
/** "do not forget to read …" is an instruction to read. */
const DOUBLE_NEGATION = /\b(?:do not|don'?t|never|must not)\s+(?:forget|fail|neglect|hesitate|skip|omit)\b/;

export interface SignalHit {
  readonly kind: SignalKind;
  /** Index of the sentence it is in: signals combine when they are close. */
  readonly sentence: number;
}

/** Shadowing is read from two marks close together: another tool's use, and a redirection. */
type Mark = SignalKind | 'other_tool_use' | 'redirection';

interface Rule {
  readonly pattern: RE2;
  /** Judges a match by the text of its sentence before it; null when the match speaks for itself. */
  readonly judge: ((prefix: string) => boolean) | null;
  readonly marks: readonly Mark[];
  /**
   * Another rule's pattern (one in the set) that every match of this one holds a match of: where
   * the set finds it nowhere, this one is not searched for. A verb then up to 80 characters of a
   * sentence before a secret is far slower to search for than the secret alone, which most texts
   * do not name.
   */
  readonly within?: RE2;
}

const RULES: readonly Rule[] = [
  { pattern: PATTERNS.secretAccess, judge: isInstruction, marks: ['secret_access'], within: PATTERNS.secretNamed },
  { pattern: PATTERNS.secretToTool, judge: isInstruction, marks: ['secret_access', 'parameter_sink'], within: PATTERNS.secretNamed },
  { pattern: PATTERNS.secretNamed, judge: isUnprohibited, marks: ['secret_named'] },
  { pattern: PATTERNS.parameterSink, judge: isUnprohibited, marks: ['parameter_sink'] },
  { pattern: PATTERNS.externalDestination, judge: isInstruction, marks: ['external_destination'] },
  { pattern: PATTERNS.override, judge: null, marks: ['override'] },
  { pattern: PATTERNS.concealment, judge: null, marks: ['concealment'] },
  { pattern: PATTERNS.covertManner, judge: isInstruction, marks: ['covert_manner'] },
  { pattern: PATTERNS.precondition, judge: null, marks: ['precondition'] },
  { pattern: PATTERNS.coercion, judge: null, marks: ['coercion'] },
  { pattern: PATTERNS.emphasis, judge: null, marks: ['emphasis'] },
  { pattern: PATTERNS.otherToolUse, judge: null, marks: ['other_tool_use'] },
  { pattern: PATTERNS.redirection, judge: null, marks: ['redirection'] },
];

/** Whether the line after the break at `i` goes on with a lowercase word: the sentence was wrapped, not ended. */
function wrapsOn(text: Buffer, i: number): boolean {
  let j = i + 1;
  while (text[j] === 0x20 || text[j] === 0x09) j++;
  const byte = text[j];
  return byte !== undefined && byte >= 0x61 && byte <= 0x7a;
}

/** Byte offsets where sentences end: a full stop, question or exclamation mark before a space, or a line break. */
function sentenceEnds(text: Buffer): number[] {
  const ends: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const byte = text[i];
    if (byte === 0x0a ? !wrapsOn(text, i) : (byte === 0x2e || byte === 0x21 || byte === 0x3f) && isJsonWhitespace(text[i + 1])) ends.push(i);
  }
  return ends;
}

function sentenceOf(ends: readonly number[], at: number): number {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid]! < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The text of the sentence before byte `at`, at most 100 bytes, lowercased. */
function prefixOf(text: Buffer, ends: readonly number[], sentence: number, at: number): string {
  const start = sentence === 0 ? 0 : ends[sentence - 1]! + 1;
  return text.toString('utf8', Math.max(start, at - 100), at).toLowerCase();
}

/** Whether the verb after `prefix` is an instruction no negation governs. */
function isInstruction(prefix: string): boolean {
  const clause = prefix.slice(Math.max(prefix.lastIndexOf(';'), prefix.lastIndexOf(' but '), prefix.lastIndexOf(' however')) + 1);
  if (NEGATION.test(clause.slice(-60)) && !DOUBLE_NEGATION.test(clause)) return false;
  if (DIRECTIVE_STRONG.test(prefix)) return true;
  return DIRECTIVE_WEAK.test(prefix) && !DESCRIPTIVE.test(clause);
}

/** Whether the text after `prefix` stands outside any prohibition ("never reads .env", "do not include secrets"). */
function isUnprohibited(prefix: string): boolean {
  const clause = prefix.slice(Math.max(prefix.lastIndexOf(';'), prefix.lastIndexOf(' but ')) + 1);
  return !NEGATION.test(clause) || DOUBLE_NEGATION.test(clause);
}

/** The rules searched for in every text: one pass of a set tells which match at all, and only those are run again for their positions. */
const EVERY_TEXT = RULES.filter((r) => r.within === undefined);
const ANY_RULE = new RE2.Set(
  EVERY_TEXT.map((r) => r.pattern),
  'i',
);

/**
 * Reads the signals in one tool's text. One RE2 set pass over the UTF-8 bytes finds which rules
 * match; a rule with a `within` pattern is left out of the set (with them, the set's automaton
 * outgrew RE2's state cache and a text it had not just seen took about five times as long) and is
 * searched for where the set found that pattern. Each rule that may match then scans once (linear) and
 * every match is judged in its sentence: whether its verb is an instruction, whether a negation
 * governs it.
 */
export function readSignals(text: string): SignalHit[] {
  const marks: Array<{ readonly kind: Mark; readonly sentence: number }> = [];
  const bytes = Buffer.from(text);
  const matching = new Set(ANY_RULE.match(bytes).map((i) => EVERY_TEXT[i]!.pattern));
  let ends: number[] | null = null;
  for (const { pattern, judge, marks: kinds, within } of RULES) {
    if (!matching.has(within ?? pattern)) continue;
    pattern.lastIndex = 0;
    for (let m = pattern.exec(bytes); m !== null; m = pattern.exec(bytes)) {
      ends ??= sentenceEnds(bytes);
      const sentence = sentenceOf(ends, m.index);
      if (judge === null || judge(prefixOf(bytes, ends, sentence, m.index))) for (const kind of kinds) marks.push({ kind, sentence });
      // A rejected match may hide an instruction later in it ("never print the key, but read ~/.ssh/id_rsa").
      else pattern.lastIndex = m.index + 1;
    }
  }
  const hits: SignalHit[] = [];
  for (const m of marks) {
    if (m.kind === 'redirection') {
      if (marks.some((u) => u.kind === 'other_tool_use' && m.sentence - u.sentence >= 0 && m.sentence - u.sentence <= 1)) hits.push({ kind: 'shadowing', sentence: m.sentence });
    } else if (m.kind !== 'other_tool_use') {
      hits.push({ kind: m.kind, sentence: m.sentence });
    }
  }
  if (TAG_CHARS.test(text)) hits.push({ kind: 'hidden_tags', sentence: 0 });
  if (BIDI_CONTROL.test(text)) hits.push({ kind: 'invisible', sentence: 0 });
  const zeroWidth = text.match(ZERO_WIDTH)?.length ?? 0;
  if (zeroWidth >= 2) hits.push({ kind: 'invisible', sentence: 0 });
  else if (zeroWidth === 1) hits.push({ kind: 'invisible_trace', sentence: 0 });
  if (PADDING.test(text)) hits.push({ kind: 'padding', sentence: 0 });
  return hits;
}

const SECRET_NAMED = new RE2(SECRET_SOURCE, 'i');
const CONTENT_WORD = /\b(?:content|contents|data|text|value|values|dump|raw|body|blob)\b/;
const LOCATION_WORD = /\b(?:path|paths|file|files|filename|dir|directory|location|name|names|url)\b/;

/** Whether a parameter, by its name alone, asks for the content of a secret-bearing source. */
export function asksForSecret(propertyName: string): boolean {
  const lower = propertyName.toLowerCase();
  return SECRET_NAMED.test(lower) && CONTENT_WORD.test(lower) && !LOCATION_WORD.test(lower);
}
