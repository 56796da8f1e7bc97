import { readFileSync } from 'node:fs';
import type { CountryCode } from 'libphonenumber-js/max';
import RE2 from 're2';
import { z } from 'zod';

/** The detector data of rules/dlp.json: candidate patterns (RE2 syntax) and what the validators need. */
export type DlpRules = z.infer<typeof dlpRulesSchema>;
export type CardRules = DlpRules['detectors']['pii.card'];
export type SsnRules = DlpRules['detectors']['pii.ssn'];
export type PhoneRules = DlpRules['detectors']['pii.phone'];

const DEFAULT_RULES_URL = new URL('../../../rules/dlp.json', import.meta.url);

function compilesInRe2(source: string): boolean {
  try {
    new RE2(source, 'u');
    return true;
  } catch {
    return false;
  }
}

/** "4" or an inclusive range of equally long prefixes, "2221-2720". */
const prefixRange = z
  .string()
  .regex(/^\d+(-\d+)?$/)
  .refine((range) => {
    const [from, to = from] = range.split('-') as [string, string?];
    return from.length === to.length && Number(from) <= Number(to);
  }, 'a range needs equally long bounds, low to high');

const detectorBase = {
  /** What the detector accepts, for people reading the data. */
  about: z.string().min(1),
  /** Alternatives of the candidate pattern; the validator decides. */
  candidate: z.array(z.string().min(1).refine(compilesInRe2, 'not a valid RE2 pattern')).min(1),
  /**
   * The longest text one value takes, in characters, with what its validator reads around it
   * (the keyword before a bare number, the local part before an `@host` candidate). Longer
   * candidates are dropped, so a stream redactor that holds back this many characters finds
   * what a whole-text scan finds.
   */
  maxLength: z.int().positive(),
};

const dlpRulesSchema = z.strictObject({
  version: z.literal(1),
  detectors: z.strictObject({
    'pii.card': z.strictObject({
      ...detectorBase,
      /** Group lengths of the printed forms, e.g. "4-6-5". */
      groupings: z.array(z.string().regex(/^\d+(-\d+)+$/)).min(1),
      networks: z
        .array(
          z.strictObject({
            name: z.string().min(1),
            prefixes: z.array(prefixRange).min(1),
            lengths: z.array(z.int().min(12).max(19)).min(1),
          }),
        )
        .min(1),
    }),
    'pii.iban': z.strictObject(detectorBase),
    'pii.ssn': z.strictObject({
      ...detectorBase,
      knownInvalid: z.array(z.string().regex(/^\d{3}-\d{2}-\d{4}$/)),
    }),
    'pii.email': z.strictObject(detectorBase),
    'pii.phone': z.strictObject({
      ...detectorBase,
      /** Fewest digits of a national number (international ones are checked by their own country's plan). */
      minDigits: z.int().min(4).max(15),
      /**
       * Regions a number written in national format may belong to, tried in this order: whether
       * libphonenumber knows each is checked when a phone validator is made, which loads it.
       */
      nationalRegions: z
        .array(z.custom<CountryCode>((region) => typeof region === 'string' && /^[A-Z]{2}$/.test(region), 'not a region code'))
        .min(1),
    }),
  }),
});

export function parseDlpRules(data: unknown): DlpRules {
  return dlpRulesSchema.parse(data);
}

let defaultRules: DlpRules | undefined;

/** rules/dlp.json, parsed and validated once per thread. */
export function loadDlpRules(): DlpRules {
  defaultRules ??= parseDlpRules(JSON.parse(readFileSync(DEFAULT_RULES_URL, 'utf8')));
  return defaultRules;
}
