import type { PiiDetectorId } from '../config/settings.js';
import { memoize } from '../lib/memo.js';
import { DlpScanner, type DlpMatch } from './dlp/index.js';
import { InjectionClassifier } from './injection/index.js';
import type { PolicyConfig } from './policy-config.js';

/** What a policy compiles to; built once per config version in each thread. */
export interface Engines {
  readonly version: string;
  /** Null when every PII detector is off. */
  readonly dlp: DlpScanner | null;
  /**
   * `dlp.scan` with its matches remembered by text, for request bodies: an agent sends its whole
   * history again with every turn, and each text is scanned once. Null when DLP is off.
   */
  readonly dlpScan: ((text: string) => readonly DlpMatch[]) | null;
  readonly injection: InjectionClassifier;
}

/** Texts whose DLP matches are remembered: this many, or this many characters in all. */
const REMEMBERED_TEXTS = 4096;
const REMEMBERED_CHARS = 1 << 20;

let cached: Engines | null = null;

/**
 * `dlp.scan`, remembered for every text: finding a long text in the memo costs less than even
 * telling whether it has a digit or an `@`, the scanner's first test.
 */
function rememberedScan(dlp: DlpScanner): (text: string) => readonly DlpMatch[] {
  return memoize((text) => dlp.scan(text), REMEMBERED_TEXTS, REMEMBERED_CHARS, REMEMBERED_CHARS);
}

export function enginesFor(policy: PolicyConfig): Engines {
  if (cached !== null && cached.version === policy.version) return cached;
  const detectors = Object.keys(policy.pii) as PiiDetectorId[];
  const dlp = detectors.length > 0 ? new DlpScanner(detectors) : null;
  cached = {
    version: policy.version,
    dlp,
    dlpScan: dlp === null ? null : rememberedScan(dlp),
    injection: new InjectionClassifier(policy.injection.extraPatterns),
  };
  return cached;
}
