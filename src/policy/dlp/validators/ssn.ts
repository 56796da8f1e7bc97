import { SPACE, freeAfter, freeBefore, isDigit, spacedDigitsAfter, spacedDigitsBefore } from '../bytes.js';
import type { SsnRules } from '../rules.js';
import type { Candidate, Finding, Validator } from './validator.js';

const CONFIDENCE_DASHED = 0.9;
const CONFIDENCE_AFTER_KEYWORD = 0.85;
/** `123 45 6789` is also how tables and phone fragments look. */
const CONFIDENCE_SPACED = 0.8;
const SSN_DIGITS = 9;

/**
 * US Social Security numbers: AAA-GG-SSSS, AAA GG SSSS, or nine bare digits right after an SSN
 * keyword (the candidate pattern carries the keyword; the finding is the digits only).
 */
export function createSsnValidator(rules: SsnRules): Validator {
  const knownInvalid = new Set(rules.knownInvalid.map((ssn) => ssn.replaceAll('-', '')));
  const validate = (candidate: Candidate): Finding | undefined => {
    const { text, bytes } = candidate;
    const afterKeyword = !isDigit(text.charCodeAt(0));
    const start = afterKeyword ? text.length - SSN_DIGITS : 0;
    const spaced = !afterKeyword && text.charCodeAt(3) === SPACE;
    const absoluteStart = candidate.start + start;
    const absoluteEnd = candidate.start + text.length;
    if (!freeBefore(bytes, absoluteStart) || !freeAfter(bytes, absoluteEnd)) return undefined;
    if (spaced && (spacedDigitsBefore(bytes, absoluteStart) || spacedDigitsAfter(bytes, absoluteEnd))) return undefined;
    const digits = afterKeyword ? text.slice(start) : text.slice(0, 3) + text.slice(4, 6) + text.slice(7);
    if (!isAssignable(digits) || knownInvalid.has(digits)) return undefined;
    const confidence = afterKeyword ? CONFIDENCE_AFTER_KEYWORD : spaced ? CONFIDENCE_SPACED : CONFIDENCE_DASHED;
    return { start, end: text.length, confidence };
  };
  return { maxConfidence: CONFIDENCE_DASHED, reachesBack: false, validate };
}

/** Area not 000, 666 or 900–999; group not 00; serial not 0000. */
export function isAssignable(digits: string): boolean {
  const area = Number(digits.slice(0, 3));
  return area !== 0 && area !== 666 && area < 900 && digits.slice(3, 5) !== '00' && digits.slice(5) !== '0000';
}
