import { DlpScanner } from './dlp/scanner.js';

/**
 * A held call's arguments as reviewers see them: the structure and the words kept, secrets taken
 * out. What is redacted:
 *
 * - the value of any member whose name says it holds a secret (password, secret, token, api key,
 *   authorization, credential, private key, cookie, session key, client secret, …), whole;
 * - secret-shaped text anywhere: provider and cloud keys (`sk-…`, `sk-ant-…`, `AKIA…`, `ghp_…`,
 *   `github_pat_…`, `xox?-…`, `glpat-…`, `AIza…`, `vk_…` virtual keys), bearer and basic
 *   credentials, JSON Web Tokens, PEM private key blocks, the password of a URL's user info, and
 *   the value of `password=`/`--token …`-style assignments and flags and `*_KEY=`/`*_TOKEN=`-style
 *   environment assignments in command lines;
 * - card numbers, IBANs and US social security numbers (the DLP detectors' validated matches).
 *
 * Each redaction reads `[REDACTED:<kind>]`. Strings longer than 4,000 characters are cut with a
 * note of how much was left out; the whole is bounded at 64 KiB of JSON.
 */

const SECRET_NAME = /(pass(word|wd|phrase)?|secret|token|api[-_]?key|apikey|access[-_]?key|auth(orization)?|credential|private[-_]?key|cookie|session[-_]?key|signature|bearer)$/i;

interface SecretPattern {
  readonly kind: string;
  readonly pattern: RegExp;
  /** The capture group holding the secret (0: the whole match). */
  readonly group: number;
}

const SECRET_PATTERNS: readonly SecretPattern[] = [
  { kind: 'private_key', pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, group: 0 },
  { kind: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, group: 0 },
  { kind: 'api_key', pattern: /\b(sk-ant-[A-Za-z0-9_-]{8,}|sk-(proj-)?[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|glpat-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}|vk_[A-Za-z0-9_-]{8,}|rt_[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9_-]{16,})/g, group: 0 },
  { kind: 'credential', pattern: /\b(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]{8,})/gi, group: 1 },
  // A scheme is short: `[a-z0-9+.-]*` read a long run of `a.a.a…` from every word in it, in quadratic time.
  { kind: 'url_password', pattern: /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/@]+:([^\s@/]+)@/gi, group: 1 },
  { kind: 'secret', pattern: /(?:^|[\s"'&?;,{(])-{0,2}[A-Za-z0-9_.-]*(?:pass(?:word|wd)?|secret|token|api[-_]?key|apikey|access[-_]?key|auth)\s*[=:]\s*("[^"]*"|'[^']*'|[^\s"'&;,)}]+)/gi, group: 1 },
  { kind: 'secret', pattern: /(?:^|\s)--?(?:pass(?:word)?|secret|token|api[-_]?key|auth)\s+("[^"]*"|'[^']*'|[^\s"']+)/gi, group: 1 },
  { kind: 'secret', pattern: /\b[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)=("[^"]*"|'[^']*'|[^\s"']+)/g, group: 1 },
];

const MAX_STRING = 4000;
const MAX_TOTAL_BYTES = 64 * 1024;
const MAX_DEPTH = 32;

let scanner: DlpScanner | undefined;
const dlp = (): DlpScanner => (scanner ??= new DlpScanner(['pii.card', 'pii.iban', 'pii.ssn']));

/** Where `text` holds something secret-shaped (the kinds `redactText` names), in no particular order. */
export function secretSpans(text: string): Array<{ start: number; end: number; kind: string }> {
  const spans: Array<{ start: number; end: number; kind: string }> = [];
  for (const { kind, pattern, group } of SECRET_PATTERNS) {
    pattern.lastIndex = 0;
    for (const m of text.matchAll(pattern)) {
      const value = m[group];
      if (value === undefined || value === '' || value.startsWith('[REDACTED:')) continue;
      const start = m.index + (group === 0 ? 0 : m[0].lastIndexOf(value));
      spans.push({ start, end: start + value.length, kind });
    }
  }
  for (const match of dlp().scan(text)) spans.push({ start: match.start, end: match.end, kind: match.detector });
  return spans;
}

/** Secret-shaped text in `text` replaced by `[REDACTED:<kind>]`. */
export function redactText(text: string): string {
  const spans = secretSpans(text);
  if (spans.length === 0) return text;
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const span of spans) {
    if (span.start < at) continue;
    out += text.slice(at, span.start) + `[REDACTED:${span.kind}]`;
    at = span.end;
  }
  return out + text.slice(at);
}

function cut(text: string): string {
  return text.length <= MAX_STRING ? text : `${text.slice(0, MAX_STRING)}… [${text.length - MAX_STRING} more characters not shown]`;
}

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return cut(redactText(value));
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[nested too deep to show]';
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_NAME.test(key) && v !== null && v !== '' && typeof v !== 'boolean' ? '[REDACTED:secret]' : redactValue(v, depth + 1);
  }
  return out;
}

/**
 * The arguments reviewers are shown. A JSON string is read as JSON first (as OpenAI sends
 * arguments); other text is redacted as text. Past the size bound, the redacted JSON text is cut.
 */
export function redactArguments(args: unknown): unknown {
  let value = args;
  if (typeof args === 'string') {
    try {
      value = JSON.parse(args);
    } catch {
      value = args;
    }
  }
  const shown = redactValue(value, 0);
  const text = JSON.stringify(shown) ?? 'null';
  if (Buffer.byteLength(text) <= MAX_TOTAL_BYTES) return shown;
  return `${text.slice(0, MAX_TOTAL_BYTES / 2)}… [arguments cut: ${text.length} characters in all]`;
}
