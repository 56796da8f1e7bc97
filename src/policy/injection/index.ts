import RE2 from 're2';
import { memoize } from '../../lib/memo.js';
import type { TextKind } from '../walk.js';
import { CUE_SOURCE } from './cues.js';
import { decodeBase64, normaliseRegion, type Segment } from './normalise.js';
import { regionContext } from './context.js';
import { scoreSegment, type Scored } from './score.js';
import type { Signal } from './signals.js';

const INJECTION_KINDS = ['tool_result', 'tool_description'] as const satisfies readonly TextKind[];
type InjectionKind = (typeof INJECTION_KINDS)[number];

export interface InjectionHit {
  readonly id: string;
  /** 0–1: how sure the classifier is that the text instructs the model against its user. */
  readonly confidence: number;
}

/** Below this a text is not reported at all. */
export const REPORT_CONFIDENCE = 0.35;
/** Verdicts remembered per kind of text: this many texts, or this many characters in all (a few sessions' tools and tool results). */
const REMEMBERED_TEXTS = 4096;
const REMEMBERED_CHARS = 1 << 20;
/** The evidence REPORT_CONFIDENCE stands for. */
const REPORT_EVIDENCE = -Math.log(1 - REPORT_CONFIDENCE);
/**
 * The least evidence worth reading a hidden segment's sentences for: a carrier's boost
 * (× 1.5 + 0.5) or an obfuscation's (+ 0.8) takes less than this nowhere near a report.
 */
const HIDDEN_READ_FLOOR = 0.2;

/** Cues that a region may hold an injection, found in one RE2 pass over the whole text. */
const PREFILTER = new RE2(CUE_SOURCE, 'gi');

/** Characters of base64 and its URL-safe alphabet, as flags: any of them, an upper-case and a lower-case letter. */
const BASE64 = 1;
const UPPER = 2;
const LOWER = 4;
const BASE64_CHAR = new Uint8Array(128);
for (const c of '0123456789+/_-') BASE64_CHAR[c.charCodeAt(0)] = BASE64;
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') BASE64_CHAR[c.charCodeAt(0)] = BASE64 | UPPER;
for (const c of 'abcdefghijklmnopqrstuvwxyz') BASE64_CHAR[c.charCodeAt(0)] = BASE64 | LOWER;
const MIN_BASE64_RUN = 24;

/**
 * Runs that may be base64 (24 or more of its characters, with up to two `=` of padding): decoded
 * and read on their own, no region around them. One pass over the character codes: ids and
 * hashes make many runs, and a regular expression costs several times as much per character.
 * Runs without both letter cases (hex ids, hashes) are left out, as `decodeBase64` would.
 */
function* base64Runs(text: string): Generator<string> {
  let start = -1;
  let seen = 0;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 0;
    const flags = code < 128 ? BASE64_CHAR[code]! : 0;
    if (flags !== 0) {
      if (start === -1) start = i;
      seen |= flags;
      continue;
    }
    if (start !== -1 && i - start >= MIN_BASE64_RUN && (seen & (UPPER | LOWER)) === (UPPER | LOWER)) {
      let end = i;
      while (end < text.length && end - i < 2 && text.charCodeAt(end) === 0x3d) end++;
      yield text.slice(start, end);
    }
    start = -1;
    seen = 0;
  }
}

/** Bytes of context kept on each side of a cue. */
const REACH = 300;
/** How far a hidden carrier (a comment) may run past its opening. */
const CARRIER_REACH = 4096;

const DETECTOR_ORDER: ReadonlyArray<readonly [string, readonly Signal[]]> = [
  ['injection.override', ['override', 'role_reset']],
  ['injection.exfiltration', ['send', 'read_secret', 'data_url']],
  ['injection.concealment', ['conceal']],
  ['injection.command', ['risky_command', 'run']],
  ['injection.addressed_instruction', ['addressed', 'addressing', 'coercion', 'repo_write']],
];

function detectorFor(signals: ReadonlySet<Signal>, hidden: boolean): string {
  for (const [id, members] of DETECTOR_ORDER) if (members.some((s) => signals.has(s))) return id;
  return hidden ? 'injection.hidden_text' : 'injection.suspicious';
}

const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80;

/** Byte ranges around each cue, merged where they touch. */
function candidateRegions(buf: Buffer): Array<[number, number]> {
  const regions: Array<[number, number]> = [];
  PREFILTER.lastIndex = 0;
  let m: ReturnType<RE2['exec']>;
  while ((m = PREFILTER.exec(buf)) !== null) {
    const at = m.index;
    const matched = m[0]!.length;
    let end = at + matched + REACH;
    if (matched === 4 && buf.toString('latin1', at, at + 4) === '<!--') {
      const close = buf.indexOf('-->', at);
      end = Math.max(end, close === -1 ? at + CARRIER_REACH : Math.min(close + 3 + REACH, at + CARRIER_REACH));
    }
    let start = Math.max(0, at - REACH);
    end = Math.min(buf.length, end);
    while (isContinuation(buf[start])) start++;
    while (isContinuation(buf[end])) end++;
    const last = regions.at(-1);
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else regions.push([start, end]);
    // Cues closer than half a reach add nothing the region does not already hold.
    PREFILTER.lastIndex = Math.max(PREFILTER.lastIndex + (matched === 0 ? 1 : 0), end - REACH / 2);
  }
  return regions;
}

/** Evidence of one segment after its context: hidden carriers count more, and are never discounted. */
function segmentEvidence(segment: Segment, scored: Scored, factor: number): number {
  if (segment.carrier === 'visible') return scored.evidence * factor;
  const base = segment.carrier === 'tag_characters' ? 1.0 : 0;
  return base + (scored.evidence >= 0.4 ? scored.evidence * 1.5 + 0.5 : scored.evidence);
}

interface RegionVerdict {
  readonly evidence: number;
  readonly detector: string;
}

function judgeRegion(raw: string, forDescription: boolean): RegionVerdict {
  const region = normaliseRegion(raw);
  const plainVisible = !region.invisible && !region.folded;
  let best: RegionVerdict = { evidence: 0, detector: 'injection.suspicious' };
  for (const segment of region.segments) {
    const floor = segment.carrier === 'visible' && plainVisible ? REPORT_EVIDENCE : HIDDEN_READ_FLOOR;
    const scored = scoreSegment(segment, forDescription, floor);
    if (scored.evidence === 0) continue;
    const factor = segment.carrier === 'visible' ? regionContext(segment.text).factor : 1;
    let evidence = segmentEvidence(segment, scored, factor);
    // Invisible characters or fullwidth letters that hid a signal: the evidence is the hiding itself.
    if (segment.carrier === 'visible' && (region.invisible || region.folded) && scored.evidence >= 0.4) {
      const plain = scoreSegment({ text: raw, carrier: 'visible' }, forDescription).evidence;
      if (scored.evidence > plain + 0.2) evidence = scored.evidence + 0.8;
    }
    if (evidence > best.evidence) best = { evidence, detector: detectorFor(scored.signals, segment.carrier !== 'visible') };
  }
  return best;
}

function* judgeBase64(text: string, forDescription: boolean): Generator<RegionVerdict> {
  for (const run of base64Runs(text)) {
    const plain = decodeBase64(run);
    if (plain === null) continue;
    const segment: Segment = { text: plain, carrier: 'base64' };
    const scored = scoreSegment(segment, forDescription);
    yield { evidence: segmentEvidence(segment, scored, 1), detector: detectorFor(scored.signals, true) };
  }
}

/**
 * The prompt-injection classifier over tool results and tool descriptions, plus a workspace's own
 * patterns (`mcpInjectionPatterns`). A workspace pattern RE2 cannot compile is dropped and
 * reported in `dropped`, so the caller can log it once.
 */
export class InjectionClassifier {
  private readonly workspacePatterns: Array<{ id: string; re: RE2 }> = [];
  readonly dropped: ReadonlyArray<{ pattern: string; reason: string }>;
  /**
   * Verdicts remembered by text, for each kind: an agent sends its tool descriptions and the tool
   * results of its history again with every turn, and each is judged once.
   */
  private readonly remembered: Readonly<Record<InjectionKind, (text: string) => InjectionHit | null>> = {
    tool_result: memoize((text) => this.judge(text, 'tool_result'), REMEMBERED_TEXTS, REMEMBERED_CHARS, REMEMBERED_CHARS),
    tool_description: memoize((text) => this.judge(text, 'tool_description'), REMEMBERED_TEXTS, REMEMBERED_CHARS, REMEMBERED_CHARS),
  };

  constructor(extraPatterns: readonly string[] = []) {
    const dropped: Array<{ pattern: string; reason: string }> = [];
    extraPatterns.forEach((pattern, i) => {
      try {
        this.workspacePatterns.push({ id: `injection.workspace.${i}`, re: new RE2(pattern, 'u') });
      } catch (err) {
        dropped.push({ pattern, reason: (err as Error).message });
      }
    });
    this.dropped = dropped;
  }

  /** Whether the classifier reads this kind of text. */
  static applies(kind: TextKind): kind is InjectionKind {
    return (INJECTION_KINDS as readonly TextKind[]).includes(kind);
  }

  /** The strongest finding in the text at or above REPORT_CONFIDENCE, or null. */
  scan(text: string, kind: InjectionKind): InjectionHit | null {
    return this.remembered[kind](text);
  }

  private judge(text: string, kind: InjectionKind): InjectionHit | null {
    for (const p of this.workspacePatterns) if (p.re.test(text)) return { id: p.id, confidence: 0.9 };
    return this.classify(text, kind);
  }

  private classify(text: string, kind: InjectionKind): InjectionHit | null {
    const buf = Buffer.from(text, 'utf8');
    const forDescription = kind === 'tool_description';
    let best: RegionVerdict = { evidence: 0, detector: 'injection.suspicious' };
    for (const [start, end] of candidateRegions(buf)) {
      const verdict = judgeRegion(buf.toString('utf8', start, end), forDescription);
      if (verdict.evidence > best.evidence) best = verdict;
    }
    for (const verdict of judgeBase64(text, forDescription)) if (verdict.evidence > best.evidence) best = verdict;
    const confidence = Math.round((1 - Math.exp(-best.evidence)) * 1000) / 1000;
    return confidence >= REPORT_CONFIDENCE ? { id: best.detector, confidence } : null;
  }
}
