import type { PiiDetectorId } from '../../config/settings.js';
import type { DlpRules } from './rules.js';
import { createCardValidator } from './validators/card.js';
import { createEmailValidator } from './validators/email.js';
import { createIbanValidator } from './validators/iban.js';
import { createPhoneValidator } from './validators/phone.js';
import { createSsnValidator } from './validators/ssn.js';
import type { Validator } from './validators/validator.js';

/** One detector ready to scan: its candidate pattern, longest candidate and validator. */
export interface Detector {
  readonly id: PiiDetectorId;
  readonly pattern: string;
  readonly maxLength: number;
  readonly validator: Validator;
}

const VALIDATORS: { readonly [Id in PiiDetectorId]: (rules: DlpRules['detectors'][Id]) => Validator } = {
  'pii.card': createCardValidator,
  'pii.iban': createIbanValidator,
  'pii.ssn': createSsnValidator,
  'pii.email': createEmailValidator,
  'pii.phone': createPhoneValidator,
};

export function createDetector<Id extends PiiDetectorId>(id: Id, rules: DlpRules): Detector {
  const detectorRules = rules.detectors[id];
  return {
    id,
    pattern: detectorRules.candidate.join('|'),
    maxLength: detectorRules.maxLength,
    validator: VALIDATORS[id](detectorRules),
  };
}
