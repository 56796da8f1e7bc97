import { PII_DETECTOR_IDS, type PiiDetectorId } from '../../config/settings.js';
import { skipWord } from './bytes.js';
import { CandidateFinder } from './candidates.js';
import { createDetector, type Detector } from './detectors.js';
import { loadDlpRules, type DlpRules } from './rules.js';
import { Utf16Offsets, Utf8Scratch } from './utf8.js';
import type { Validator } from './validators/validator.js';

/** A validated value: offsets into the scanned JS string (UTF-16 code units), end exclusive. */
export interface DlpMatch {
  detector: PiiDetectorId;
  start: number;
  end: number;
  /** 0–1 */
  confidence: number;
}

/** A finding in bytes of the scanned UTF-8. */
interface ByteMatch {
  readonly detector: PiiDetectorId;
  readonly start: number;
  readonly end: number;
  readonly confidence: number;
}

/**
 * Every validator needs a digit (card, IBAN, SSN, phone) or an `@` (email) in what it accepts,
 * so a text with neither holds nothing to find.
 */
const MAY_HOLD_PII = /[0-9@]/;

/**
 * Finds personal data with one RE2 pass for all enabled detectors and a validator per
 * detector. Construction compiles the patterns (~1 ms); one scanner per thread, reused: `scan`
 * is synchronous and keeps a scratch buffer between calls.
 */
export class DlpScanner {
  /**
   * The longest text any enabled detector can match, in UTF-16 code units: a stream redactor
   * holds back this many characters. It includes what a validator reads before a value (`SSN:`
   * before nine bare digits), so text kept for a later scan must start `maxMatchLength` before
   * a match's end, not at the match's start.
   */
  readonly maxMatchLength: number;
  private readonly detectors: readonly Detector[];
  private readonly finder: CandidateFinder;
  private readonly scratch = new Utf8Scratch();

  /**
   * @param detectors which detectors to run (default: all five)
   * @param rules detector data (default: rules/dlp.json)
   */
  constructor(detectors: readonly PiiDetectorId[] = PII_DETECTOR_IDS, rules: DlpRules = loadDlpRules()) {
    this.detectors = PII_DETECTOR_IDS.filter((id) => detectors.includes(id)).map((id) => createDetector(id, rules));
    this.finder = new CandidateFinder(this.detectors.map((detector) => detector.pattern));
    this.maxMatchLength = Math.max(0, ...this.detectors.map((detector) => detector.maxLength));
  }

  /** Validated matches, sorted by start, never overlapping (where findings compete, the longer, then the more confident, wins). */
  scan(text: string): DlpMatch[] {
    if (this.detectors.length === 0 || !MAY_HOLD_PII.test(text)) return [];
    const bytes = this.scratch.encode(text);
    const found: ByteMatch[] = [];
    for (let from = 0; from < bytes.length; ) {
      const start = this.finder.nextStart(bytes, from);
      if (start < 0) break;
      const best = this.bestMatchAt(bytes, start);
      if (best === undefined) {
        from = skipWord(bytes, start);
        continue;
      }
      keepBetter(found, best);
      from = best.end;
    }
    const offsets = new Utf16Offsets(text, bytes);
    return found.map((match) => ({ detector: match.detector, ...offsets.toUtf16(match.start, match.end), confidence: match.confidence }));
  }

  /** The best validated finding among the candidates of every detector whose pattern matches at `start`. */
  private bestMatchAt(bytes: Buffer, start: number): ByteMatch | undefined {
    let best: ByteMatch | undefined;
    for (let index = 0; index < this.detectors.length; index++) {
      const detector = this.detectors[index]!;
      const end = this.finder.endAt(index, bytes, start);
      if (end < 0 || end - start > detector.maxLength || !canBeat(end - start, detector.validator, best)) continue;
      const finding = detector.validator.validate({ text: bytes.toString('latin1', start, end), bytes, start });
      if (finding === undefined) continue;
      const found = { detector: detector.id, start: start + finding.start, end: start + finding.end, confidence: finding.confidence };
      if (best === undefined || isBetter(found, best)) best = found;
    }
    return best;
  }
}

/**
 * Adds `match` to the sorted, non-overlapping `found`. A finding can reach back over earlier
 * ones (`4111111111111111@example.com` is found as a card, then as an address): it replaces
 * those it overlaps if it beats each of them, and is dropped otherwise.
 */
function keepBetter(found: ByteMatch[], match: ByteMatch): void {
  let firstOverlapped = found.length;
  while (firstOverlapped > 0 && found[firstOverlapped - 1]!.end > match.start) firstOverlapped--;
  if (found.slice(firstOverlapped).every((earlier) => isBetter(match, earlier))) found.splice(firstOverlapped, found.length - firstOverlapped, match);
}

/** Whether validating a candidate this long could still replace `best` (so a card is not looked up as a phone number too). */
function canBeat(candidateLength: number, validator: Validator, best: ByteMatch | undefined): boolean {
  if (best === undefined || validator.reachesBack) return true;
  const bestLength = best.end - best.start;
  return candidateLength > bestLength || (candidateLength === bestLength && validator.maxConfidence > best.confidence);
}

function isBetter(a: ByteMatch, b: ByteMatch): boolean {
  const lengthA = a.end - a.start;
  const lengthB = b.end - b.start;
  return lengthA > lengthB || (lengthA === lengthB && a.confidence > b.confidence);
}
