// @ts-check
/**
 * Mock OpenAI-compatible model server for decide rules: `POST /v1/chat/completions` answering
 * yes/no questions with first-token log probabilities, and free text when no logprobs are asked.
 *
 * What it answers is steered, first match wins, by:
 *   1. answers registered with `setAnswers([{ match, ...spec }])` (or `POST /__control` with
 *      `{"answers": [...]}`): `match` is a substring of the user message (question and subject);
 *   2. directives inside the user message: `[[p=0.93]]`, `[[delay=250]]`, `[[status=500]]`,
 *      `[[nologprobs]]`, `[[text=VIOLATION: reason]]`;
 *   3. `x-mock-p-yes`, `x-mock-delay-ms`, `x-mock-status`, `x-mock-no-logprobs` request headers;
 *   4. the known-answer canary questions, answered correctly unless `setCanary('wrong')`;
 *   5. the default p(yes) of 0.05 (a clear No).
 *
 * A spec is `{ pYes, delayMs, status, noLogprobs, text, variants }`; `variants` splits each
 * answer's mass over "Yes"/" yes" and "No"/" no" tokens, as real tokenizers do.
 *
 * CLI: node bench/mock/decide-model.js --port 5002 [--host 127.0.0.1]
 */
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const DEFAULT_P_YES = 0.05;
/** Log probability written for a probability of zero: JSON has no -Infinity. */
const LOG_ZERO = -1000;
const CANARY_ANSWERS = [
  { match: 'Two plus two equals four.', pYes: 0.99 },
  { match: 'The invoice total is 42 euros.', pYes: 0.01 },
];
const DEFAULT_TEXT = 'COMPLIANT: the response breaks no stated constraint.';

/**
 * @typedef {object} AnswerSpec
 * @property {number} [pYes]
 * @property {number} [delayMs]
 * @property {number} [status]
 * @property {boolean} [noLogprobs]
 * @property {string} [text]
 * @property {boolean} [variants]
 */
/** @typedef {AnswerSpec & { match: string }} MatchedAnswer */

/** @param {number} p */
function logOf(p) {
  return p <= 0 ? LOG_ZERO : Math.log(p);
}

/**
 * @param {number} pYes
 * @param {boolean} variants
 */
function topLogprobs(pYes, variants) {
  const pairs = variants
    ? [
        ['Yes', pYes * 0.7],
        [' yes', pYes * 0.3],
        ['No', (1 - pYes) * 0.7],
        [' no', (1 - pYes) * 0.3],
      ]
    : [
        ['Yes', pYes],
        ['No', 1 - pYes],
      ];
  const list = pairs.map(([token, p]) => ({ token: /** @type {string} */ (token), logprob: logOf(/** @type {number} */ (p)), bytes: [] }));
  list.push({ token: 'Maybe', logprob: LOG_ZERO, bytes: [] });
  return list.sort((a, b) => b.logprob - a.logprob);
}

/**
 * @param {string} text
 * @returns {AnswerSpec}
 */
function directivesIn(text) {
  /** @type {AnswerSpec} */
  const spec = {};
  for (const m of text.matchAll(/\[\[(\w+)(?:=([^\]]*))?\]\]/g)) {
    const [, name, value] = m;
    if (name === 'p') spec.pYes = Number(value);
    else if (name === 'delay') spec.delayMs = Number(value);
    else if (name === 'status') spec.status = Number(value);
    else if (name === 'nologprobs') spec.noLogprobs = true;
    else if (name === 'text') spec.text = value;
    else if (name === 'variants') spec.variants = true;
  }
  return spec;
}

/**
 * @param {import('node:http').IncomingHttpHeaders} headers
 * @returns {AnswerSpec}
 */
function headerSpec(headers) {
  /** @type {AnswerSpec} */
  const spec = {};
  if (headers['x-mock-p-yes'] !== undefined) spec.pYes = Number(headers['x-mock-p-yes']);
  if (headers['x-mock-delay-ms'] !== undefined) spec.delayMs = Number(headers['x-mock-delay-ms']);
  if (headers['x-mock-status'] !== undefined) spec.status = Number(headers['x-mock-status']);
  if (headers['x-mock-no-logprobs'] !== undefined) spec.noLogprobs = true;
  return spec;
}

/**
 * @param {{ port?: number, host?: string }} [opts]
 */
export async function startDecideModel(opts = {}) {
  /** @type {MatchedAnswer[]} */
  let answers = [];
  let canary = /** @type {'right' | 'wrong'} */ ('right');
  /** @type {Array<{ headers: import('node:http').IncomingHttpHeaders, body: any }>} */
  const requests = [];
  let questions = 0;

  /**
   * @param {string} userText
   * @param {import('node:http').IncomingHttpHeaders} headers
   * @returns {AnswerSpec}
   */
  function specFor(userText, headers) {
    const registered = answers.find((a) => userText.includes(a.match));
    if (registered) return registered;
    const inline = directivesIn(userText);
    if (Object.keys(inline).length > 0) return inline;
    const fromHeaders = headerSpec(headers);
    if (Object.keys(fromHeaders).length > 0) return fromHeaders;
    const known = CANARY_ANSWERS.find((c) => userText.includes(c.match));
    if (known) return { pYes: canary === 'right' ? known.pYes : 1 - known.pYes };
    return {};
  }

  const server = createServer((req, res) => {
    const chunks = /** @type {Buffer[]} */ ([]);
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      /** @type {any} */
      let body = null;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
      const send = (/** @type {number} */ status, /** @type {unknown} */ payload) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.method === 'POST' && req.url === '/__control') {
        if (Array.isArray(body?.answers)) answers = body.answers;
        if (body?.canary === 'right' || body?.canary === 'wrong') canary = body.canary;
        send(200, { ok: true });
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        send(404, { error: { message: 'not found', type: 'invalid_request_error', code: 'not_found' } });
        return;
      }
      requests.push({ headers: req.headers, body });
      if (requests.length > 1000) requests.shift();
      const messages = Array.isArray(body?.messages) ? body.messages : [];
      const userText = messages.filter((/** @type {any} */ m) => m.role === 'user').map((/** @type {any} */ m) => String(m.content)).join('\n');
      const spec = specFor(userText, req.headers);
      if (body?.logprobs === true) questions++;
      const answer = () => {
        if (spec.status !== undefined && spec.status !== 200) {
          send(spec.status, { error: { message: 'mock model error', type: 'server_error', code: 'mock_error' } });
          return;
        }
        const model = typeof body?.model === 'string' ? body.model : 'mock-judge';
        const base = { id: 'chatcmpl-decide', object: 'chat.completion', created: 1700000000, model };
        if (body?.logprobs !== true) {
          const content = spec.text ?? DEFAULT_TEXT;
          send(200, { ...base, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }] });
          return;
        }
        const pYes = spec.pYes ?? DEFAULT_P_YES;
        const top = topLogprobs(pYes, spec.variants === true);
        const first = top[0];
        send(200, {
          ...base,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: first.token.trim() },
              finish_reason: 'length',
              logprobs: spec.noLogprobs ? null : { content: [{ token: first.token, logprob: first.logprob, bytes: [], top_logprobs: top }] },
            },
          ],
          usage: { prompt_tokens: Math.ceil(userText.length / 4), completion_tokens: 1, total_tokens: Math.ceil(userText.length / 4) + 1 },
        });
      };
      if (spec.delayMs) setTimeout(answer, spec.delayMs);
      else answer();
    });
  });
  await new Promise((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  const origin = `http://${opts.host ?? '127.0.0.1'}:${address.port}`;
  return {
    /** The OpenAI-compatible base URL, e.g. http://127.0.0.1:5002/v1 */
    url: `${origin}/v1`,
    origin,
    port: address.port,
    requests,
    /** Yes/no questions asked so far (canary questions included). */
    get questions() {
      return questions;
    },
    /** @param {MatchedAnswer[]} list */
    setAnswers(list) {
      answers = list;
    },
    /** @param {'right' | 'wrong'} mode */
    setCanary(mode) {
      canary = mode;
    },
    reset() {
      answers = [];
      canary = 'right';
      requests.length = 0;
      questions = 0;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } } });
  const mock = await startDecideModel({ port: Number(values.port), host: values.host });
  process.stdout.write(`decide model listening on ${mock.url}\n`);
}
