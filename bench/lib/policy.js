// @ts-check
/** The PII settings every bench scenario and policy micro-benchmark runs: all five DLP detectors redacting. */
export const PII_REDACTING = /** @type {const} */ ({
  'pii.card': 'redact',
  'pii.iban': 'redact',
  'pii.ssn': 'redact',
  'pii.email': 'redact',
  'pii.phone': 'redact',
});
