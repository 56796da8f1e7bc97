// @ts-check
/**
 * Throughput of DLP scanning: `DlpScanner.scan` with all five detectors over 1 MB of the mixed
 * text agents exchange with models (prose, code, JSON, logs, CSV, stack traces, diffs, shell
 * output) with a few dozen personal values (a block every 40 KB or so). One long-lived scanner,
 * as a policy worker keeps one, scans a different text each round, so validators meet numbers
 * they have not seen.
 * Measured twice: text with a few non-ASCII characters (em dashes, accents, emoji), which V8
 * stores as a two-byte string, and the same kind of text in ASCII only.
 */
import { seededRandom } from '../lib/random.js';
import { medianSeconds } from './timing.js';

const TARGET_BYTES = 1024 * 1024;
const SEED = 0xd15c;
const PII_EVERY_BYTES = 40_000;
/** Texts scanned before timing: the validators' libraries get warm as in a long-lived worker. */
const WARM_UP_TEXTS = 10;
const ROUNDS = 9;

/** @type {import('./index.js').MicroBenchmark} */
export const dlpScanBenchmark = {
  name: 'dlp-scan',
  description: 'DlpScanner.scan from dist/policy/dlp/ over 1 MB of mixed text, all detectors on: MB/s',
  async run() {
    const { DlpScanner } = await import('../../dist/policy/dlp/index.js');
    const mixed = throughput(new DlpScanner(), { ascii: false });
    const ascii = throughput(new DlpScanner(), { ascii: true });
    return { 'MB/s': mixed.mbPerSecond, 'MB/s ascii': ascii.mbPerSecond, 'matches/MB': mixed.matchesPerText };
  },
};

/**
 * Median MB/s of one scanner over a fresh text per round, after warm-up texts.
 * @param {import('../../dist/policy/dlp/index.js').DlpScanner} scanner
 * @param {{ ascii: boolean }} options
 */
function throughput(scanner, options) {
  const texts = Array.from({ length: WARM_UP_TEXTS + ROUNDS + 1 }, (_, round) => mixedText(TARGET_BYTES, SEED + round, options));
  for (const text of texts.splice(0, WARM_UP_TEXTS)) scanner.scan(text);
  let next = 0;
  let matches = 0;
  const seconds = medianSeconds(() => {
    matches = scanner.scan(/** @type {string} */ (texts[next++])).length;
    if (matches === 0) throw new Error('the scanner found nothing in text that holds personal data');
  }, ROUNDS);
  const bytes = Buffer.byteLength(/** @type {string} */ (texts[0]));
  return { mbPerSecond: Math.round(bytes / 1e6 / seconds), matchesPerText: matches };
}

/**
 * About `bytes` bytes of mixed text, the same for the same seed.
 * @param {number} bytes
 * @param {number} seed
 * @param {{ ascii: boolean }} options without non-ASCII characters when `ascii`
 */
function mixedText(bytes, seed, { ascii }) {
  const random = seededRandom(seed);
  const pick = (/** @type {readonly string[]} */ items) => /** @type {string} */ (items[Math.floor(random() * items.length)]);
  const int = (/** @type {number} */ below) => Math.floor(random() * below);
  const hex = (/** @type {number} */ length) => Array.from({ length }, () => '0123456789abcdef'[int(16)]).join('');
  const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
  const iso = () => `2025-0${1 + int(9)}-${String(1 + int(28)).padStart(2, '0')}T${String(int(24)).padStart(2, '0')}:${String(int(60)).padStart(2, '0')}:${String(int(60)).padStart(2, '0')}.${String(int(1000)).padStart(3, '0')}Z`;
  const word = () => pick(WORDS);
  const sentence = () => {
    const words = Array.from({ length: 8 + int(14) }, word);
    if (random() < 0.3) words.splice(int(words.length), 0, `${int(100)}%`);
    if (random() < 0.2) words.splice(int(words.length), 0, `v${int(5)}.${int(30)}.${int(10)}`);
    if (!ascii && random() < 0.1) words.splice(int(words.length), 0, pick(['—', '“quoted”', 'naïve', 'café', '→', '✓', '🚀']));
    const text = words.join(' ');
    return `${text[0]?.toUpperCase()}${text.slice(1)}.`;
  };

  /** @type {(() => string)[]} */
  const blocks = [
    () => `${Array.from({ length: 2 + int(4) }, sentence).join(' ')}\n\n`,
    () => `## ${word()} ${word()}\n\n- ${sentence()}\n- ${sentence()}\n- Took ${int(900)} ms over ${int(50)} runs (p99 ${int(80)} ms).\n\n`,
    () =>
      `\`\`\`ts\nimport { ${word()}Handler } from './${word()}/index.js';\n\nexport async function ${word()}${int(10)}(input: Request, retries = ${int(5)}): Promise<Response> {\n  const timeoutMs = ${int(60)}_000;\n  const res = await fetch(\`\${BASE_URL}/v${int(3)}/${word()}s/\${input.id}\`, { signal: AbortSignal.timeout(timeoutMs) });\n  if (res.status === ${pick(['404', '429', '503'])}) throw new HttpError(res.status, '${sentence()}');\n  return res.json() as Promise<${word()}Result>;\n}\n\`\`\`\n`,
    () =>
      `def ${word()}_${word()}(items, limit=${int(1000)}):\n    """${sentence()}"""\n    total = sum(i.price * i.qty for i in items[:limit])\n    return round(total * 1.${int(30)}, 2)\n\n`,
    () =>
      `${JSON.stringify({
        id: uuid(),
        object: 'chat.completion',
        created: 1_740_000_000 + int(9_000_000),
        model: pick(['gpt-4o-mini-2024-07-18', 'claude-sonnet-4-20250514']),
        usage: { prompt_tokens: int(4000), completion_tokens: int(900), total_tokens: int(5000) },
        metadata: { request_ms: int(3000), region: pick(['us-east-1', 'eu-west-1']), sha: hex(40), updatedAt: iso(), score: Math.round(random() * 1e4) / 1e4 },
      })}\n`,
    () =>
      `${iso()} ${pick(['INFO', 'WARN', 'DEBUG', 'ERROR'])} [${pick(['http', 'db', 'worker-3', 'scheduler'])}] req=${hex(16)} ${pick(['GET', 'POST', 'PUT'])} /api/v1/${word()}s/${int(100000)} status=${pick(['200', '201', '304', '404', '500'])} latency_ms=${int(2000)} bytes=${int(200000)} ip=10.${int(256)}.${int(256)}.${int(256)}\n`,
    () => `order_id,sku,qty,unit_price,created_at\n${Array.from({ length: 3 + int(6) }, () => `${100000 + int(900000)},SKU-${int(99999)},${1 + int(9)},${int(500)}.${String(int(100)).padStart(2, '0')},2025-0${1 + int(9)}-${String(1 + int(28)).padStart(2, '0')}`).join('\n')}\n\n`,
    () =>
      `TypeError: Cannot read properties of undefined (reading '${word()}')\n    at ${word()}Service.handle (/app/src/${word()}.ts:${int(400)}:${int(80)})\n    at process.processTicksAndRejections (node:internal/process/task_queues:${int(100)}:${int(10)})\n    at async Router.dispatch (/app/node_modules/router/index.js:${int(600)}:${int(40)})\n`,
    () => `diff --git a/src/${word()}.ts b/src/${word()}.ts\nindex ${hex(7)}..${hex(7)} 100644\n@@ -${int(300)},${int(20)} +${int(300)},${int(20)} @@ export class ${word()} {\n-  private readonly limit = ${int(100)};\n+  private readonly limit = ${int(1000)};\n`,
    () => `.${word()}-card { color: #${hex(6)}; margin: ${int(24)}px ${int(24)}px; transition: opacity 0.${int(9)}s ease-in-out; z-index: ${int(1000)}; }\n`,
    () => `$ docker ps\nCONTAINER ID   IMAGE          STATUS          PORTS\n${hex(12)}   ${word()}:${int(9)}.${int(9)}   Up ${int(59)} minutes   0.0.0.0:${3000 + int(6000)}->${int(9000)}/tcp\n`,
  ];

  const digits = (/** @type {number} */ length) => Array.from({ length }, () => String(int(10))).join('');
  const card = () => withLuhnDigit(`4${digits(14)}`).replace(/(\d{4})(?=\d)/g, '$1 ');
  const iban = () => germanIban(digits(18)).replace(/(.{4})(?=.)/g, '$1 ');
  const ssn = () => `${100 + int(565)}-${10 + int(89)}-${1000 + int(8999)}`;
  const usPhone = () => `(${pick(['212', '312', '415', '617', '206', '303', '512', '646'])}) ${2 + int(7)}${digits(2)}-${digits(4)}`;
  const ukMobile = () => `+44 7${4 + int(6)}${digits(2)} ${digits(6)}`;
  const email = () => `${pick(['jane.doe', 'ops+alerts', 'j.smith', 'billing'])}${int(100)}@${pick(['example.com', 'mail.example.co.uk', 'acme.dev'])}`;
  /** @type {(() => string)[]} */
  const personal = [
    () => `Customer wrote: "please refund to card ${card()}, thanks".\n`,
    () => `Contact: ${email()}\n`,
    () => `{"name": "Max Mustermann", "iban": "${iban()}", "email": "${email()}"}\n`,
    () => `Call me at ${usPhone()} or on my mobile ${ukMobile()}.\n`,
    () => `applicant_ssn=${ssn()} dob=1984-07-12\n`,
  ];

  /** @type {string[]} */
  const parts = [];
  let size = 0;
  let sinceLastPii = 0;
  while (size < bytes) {
    const part = sinceLastPii >= PII_EVERY_BYTES ? pick(personal)() : pick(blocks)();
    sinceLastPii = sinceLastPii >= PII_EVERY_BYTES ? 0 : sinceLastPii + part.length;
    parts.push(part);
    size += Buffer.byteLength(part);
  }
  return parts.join('');
}

const WORDS = ['the', 'cache', 'request', 'user', 'session', 'token', 'worker', 'queue', 'retry', 'build', 'deploy', 'config', 'schema', 'handler', 'stream', 'budget', 'model', 'policy', 'trace', 'route', 'index', 'value', 'result', 'error', 'timeout', 'limit', 'and', 'with', 'for', 'when', 'after', 'should', 'we', 'it', 'is', 'not', 'a', 'to', 'of', 'in'];

/**
 * `body` with its Luhn check digit appended.
 * @param {string} body
 */
function withLuhnDigit(body) {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/**
 * A German IBAN (18-digit BBAN) with its mod-97 check digits.
 * @param {string} bban
 */
function germanIban(bban) {
  const check = 98n - (BigInt(`${bban}131400`) % 97n);
  return `DE${String(check).padStart(2, '0')}${bban}`;
}

