import { SPACE, freeAfter, freeBefore, spacedDigitsBefore } from '../bytes.js';
import type { CardRules } from '../rules.js';
import { groupCuts } from './group-cuts.js';
import type { Candidate, Finding, Validator } from './validator.js';

const CONFIDENCE_GROUPED = 0.95;
/** A compact run is more often an id that happens to pass Luhn (one in ten does). */
const CONFIDENCE_COMPACT = 0.9;

interface PrefixRange {
  /** How many leading digits the range is about. */
  readonly length: number;
  readonly from: number;
  readonly to: number;
}

interface Network {
  readonly prefixes: readonly PrefixRange[];
  readonly lengths: ReadonlySet<number>;
}

/** Card numbers: consistent separators in a usual grouping, a network prefix with one of its lengths, Luhn. */
export function createCardValidator(rules: CardRules): Validator {
  const networks = rules.networks.map(toNetwork);
  const groupings = new Set(rules.groupings);
  const validate = (candidate: Candidate): Finding | undefined => {
    const { text, bytes, start } = candidate;
    if (!freeBefore(bytes, start)) return undefined;
    // `1234 4111 1111 1111 1111` is a run of numbers, not a card after a number.
    if (text.charCodeAt(4) === SPACE && spacedDigitsBefore(bytes, start)) return undefined;
    for (const cut of groupCuts(text)) {
      const digits = cardDigits(text.slice(0, cut), groupings);
      if (digits === undefined || !hasNetwork(digits, networks) || !passesLuhn(digits)) continue;
      return freeAfter(bytes, start + cut) ? { start: 0, end: cut, confidence: digits.length === cut ? CONFIDENCE_COMPACT : CONFIDENCE_GROUPED } : undefined;
    }
    return undefined;
  };
  return { maxConfidence: CONFIDENCE_GROUPED, reachesBack: false, validate };
}

/** The digits of a compact number, or of a grouped one whose separators are all the same and whose grouping is usual. */
function cardDigits(text: string, groupings: ReadonlySet<string>): string | undefined {
  const groups = text.split(/[ -]/);
  if (groups.length === 1) return text;
  const separator = text[groups[0]!.length]!;
  if (!text.split(separator).every((group) => /^\d+$/.test(group))) return undefined;
  return groupings.has(groups.map((group) => group.length).join('-')) ? groups.join('') : undefined;
}

function toNetwork(network: CardRules['networks'][number]): Network {
  return {
    prefixes: network.prefixes.map((range) => {
      const [from, to = from] = range.split('-') as [string, string?];
      return { length: from.length, from: Number(from), to: Number(to) };
    }),
    lengths: new Set(network.lengths),
  };
}

function hasNetwork(digits: string, networks: readonly Network[]): boolean {
  return networks.some(
    (network) =>
      network.lengths.has(digits.length) &&
      network.prefixes.some((prefix) => {
        const head = Number(digits.slice(0, prefix.length));
        return head >= prefix.from && head <= prefix.to;
      }),
  );
}

export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let digit = digits.charCodeAt(i) - 0x30;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}
