export { DlpScanner, type DlpMatch } from './scanner.js';
export { redact } from './redact.js';
export { loadDlpRules, parseDlpRules, type DlpRules } from './rules.js';
