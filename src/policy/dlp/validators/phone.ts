import type { CountryCode, PhoneNumber } from 'libphonenumber-js/max';
import { phoneNumbers } from './libraries.js';
import { PLUS, freeAfter, freeBefore, isLetter, spacedDigitsAfter, spacedDigitsBefore } from '../bytes.js';
import type { PhoneRules } from '../rules.js';
import { groupCuts } from './group-cuts.js';
import { memoize } from '../../../lib/memo.js';
import { digitsOf, writtenAsNational } from './national-form.js';
import type { Candidate, Finding, Validator } from './validator.js';

const CONFIDENCE_INTERNATIONAL = 0.9;
const CONFIDENCE_NATIONAL = 0.85;
/** Spaces also separate columns of numbers; bare digits after a keyword may be any id. */
const CONFIDENCE_NATIONAL_SPACED = 0.8;
const CONFIDENCE_AFTER_KEYWORD = 0.75;
/** Shortest international number worth a lookup: country code plus a short national number. */
const MIN_INTERNATIONAL_DIGITS = 8;
/** libphonenumber takes 20–80 µs a number, and an agent's conversation resends the same numbers every turn. */
const REMEMBERED_NUMBERS = 4096;
/** `+44…`, or `0044…` (the international call prefix most countries use). */
const INTERNATIONAL_PREFIX = /^(?:\+|00[1-9])/;
/** `AAA-GG-SSSS` / `AAA GG SSSS` is how US Social Security numbers are written, not phone numbers. */
const SSN_SHAPE = /^\d{3}([ -])\d{2}\1\d{4}$/;

interface Region {
  readonly code: CountryCode;
  /** Lengths a national number of the region can have, without its national prefix. */
  readonly lengths: ReadonlySet<number>;
}

/**
 * Phone numbers, decided by libphonenumber's full metadata: international numbers (`+`, `00`)
 * must be valid for their country; national ones valid for one of the configured regions and
 * written the way that region writes them (so `2024-03-15` is not a German number without its
 * trunk `0`); a bare digit run only counts right after a phone keyword.
 */
export function createPhoneValidator(rules: PhoneRules): Validator {
  const regions = rules.nationalRegions.map(toRegion);
  const isInternational = memoize((text) => parse(text)?.isValid() === true, REMEMBERED_NUMBERS);
  const isNational = memoize((text) => regions.some((region) => isNationalNumberOf(region, text)), REMEMBERED_NUMBERS);

  const validate = (candidate: Candidate): Finding | undefined => {
    const { text } = candidate;
    if (INTERNATIONAL_PREFIX.test(text)) return international(candidate, isInternational);
    if (isLetter(text.charCodeAt(0))) return afterKeyword(candidate, isNational);
    return nationalFormat(candidate, rules.minDigits, isNational);
  };
  return { maxConfidence: CONFIDENCE_INTERNATIONAL, reachesBack: false, validate };
}

type NumberCheck = (text: string) => boolean;

function international(candidate: Candidate, isInternational: NumberCheck): Finding | undefined {
  const { text, bytes, start } = candidate;
  // Without a `+`, `0049 3538 4317` could as well be three groups of a longer run of numbers.
  const callPrefix = text.startsWith('00');
  if (!freeBefore(bytes, start) || (callPrefix && spacedDigitsBefore(bytes, start))) return undefined;
  const plusForm = callPrefix ? `+${text.slice(2)}` : text;
  const skipped = text.length - plusForm.length;
  for (const cut of groupCuts(plusForm)) {
    const value = plusForm.slice(0, cut);
    if (digitsOf(value).length < MIN_INTERNATIONAL_DIGITS) break;
    const end = cut + skipped;
    const alone = freeAfter(bytes, start + end) && !(callPrefix && spacedDigitsAfter(bytes, start + end));
    if (alone && isInternational(value)) return { start: 0, end, confidence: CONFIDENCE_INTERNATIONAL };
  }
  return undefined;
}

function nationalFormat(candidate: Candidate, minDigits: number, isNational: NumberCheck): Finding | undefined {
  const { text, bytes, start } = candidate;
  // After a `+` it is the tail of an international number that did not validate.
  if (!freeBefore(bytes, start) || bytes[start - 1] === PLUS) return undefined;
  const spaced = text.includes(' ') && !text.startsWith('(');
  if (spaced && spacedDigitsBefore(bytes, start)) return undefined;
  for (const cut of groupCuts(text)) {
    const value = text.slice(0, cut);
    if (digitsOf(value).length < minDigits) break;
    // The cheap checks first: a run of numbers (a table, a hex dump) must not cost a lookup per group.
    const alone = freeAfter(bytes, start + cut) && !(spaced && spacedDigitsAfter(bytes, start + cut));
    if (alone && !SSN_SHAPE.test(value) && isNational(value)) return { start: 0, end: cut, confidence: spaced ? CONFIDENCE_NATIONAL_SPACED : CONFIDENCE_NATIONAL };
  }
  return undefined;
}

function afterKeyword(candidate: Candidate, isNational: NumberCheck): Finding | undefined {
  const { text, bytes } = candidate;
  const digits = /\d+$/.exec(text)?.[0];
  if (digits === undefined) return undefined;
  const start = text.length - digits.length;
  if (!freeBefore(bytes, candidate.start + start) || !freeAfter(bytes, candidate.start + text.length) || !isNational(digits)) return undefined;
  return { start, end: text.length, confidence: CONFIDENCE_AFTER_KEYWORD };
}

function isNationalNumberOf(region: Region, text: string): boolean {
  const digits = digitsOf(text);
  // One trunk digit (0, or 1 in North America) may precede the national number.
  if (!region.lengths.has(digits.length) && !region.lengths.has(digits.length - 1)) return false;
  const number = parse(text, region.code);
  return number !== undefined && number.isValid() && writtenAsNational(number, text);
}

function parse(text: string, region?: CountryCode): PhoneNumber | undefined {
  const { core, metadata } = phoneNumbers();
  return core.parsePhoneNumberFromString(text, { defaultCountry: region, extract: false }, metadata);
}

/** A region of the rules' `nationalRegions`: checked here, where libphonenumber is loaded, not when the rules are. */
function toRegion(code: CountryCode): Region {
  const { core, metadata } = phoneNumbers();
  if (!core.isSupportedCountry(code, metadata)) throw new Error(`pii.phone: nationalRegions: ${code} is not a supported region`);
  const plans = new core.Metadata(metadata);
  plans.selectNumberingPlan(code);
  return { code, lengths: new Set(plans.numberingPlan?.possibleLengths()) };
}
