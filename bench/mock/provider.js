// @ts-check
/**
 * Mock model provider for tests and benchmarks, on uWebSockets.js.
 *
 * Speaks the OpenAI (chat/completions, completions, embeddings, responses, models) and
 * Anthropic (messages, messages/count_tokens) wire formats, matched by path suffix so any
 * base path works. Behaviour is steered per request by `x-mock-*` headers, or by a `mock`
 * object in the JSON body with the same names minus the prefix (headers win):
 *
 *   content          reply text (header value is percent-encoded)
 *   chunks           number of content deltas in a stream (default 10)
 *   tool-args        JSON arguments of the tool call made when the request offers tools; each
 *                    `{serial}` in them becomes a number the mock counts up, so that every call
 *                    differs
 *   status           answer with this HTTP status in the provider's error shape
 *   retry-after      retry-after seconds sent with a 429 (default 1)
 *   reset            `before`: close without answering; `mid`: close halfway through the body
 *   stream-error     stream an error event instead of the reply
 *   key, fail-times  apply status/reset/stream-error only to the first N requests with that key
 *   delay-ms         wait before sending the headers
 *   chunk-delay-ms   wait between stream events
 *   stream-bytes     stream ~16 KiB deltas until about N bytes were sent (honours backpressure)
 *   no-usage         leave usage out of every answer
 *   finish-in-last-delta  a chat stream's last content delta also carries `finish_reason`
 *   text-field       where a streamed reply's text goes: `reasoning` (chat `reasoning_content`,
 *                    a Responses reasoning summary, an Anthropic thinking block), `refusal` (chat
 *                    and Responses refusals) or `opening` (all of it in the Anthropic
 *                    `content_block_start` or the Responses `output_item.added`, no deltas)
 *
 * A script (`startMockProvider({ script })` or `setScript`) plays a harness's conversation: step N
 * answers the request that carries N tool results, so a tool call is followed by the next step
 * only once the agent has sent its result back, and retries or side requests of the same turn get
 * the same answer. A `tool` step calls that tool (an object input is JSON arguments; a string
 * input is a freeform call, a Responses `custom_tool_call`) when the request offers any tool, in
 * `tools` or, as Codex code mode does, in an `additional_tools` input item; a request offering
 * none is answered with the script's last text. A `text` step answers with that text. Past the
 * last step, the last step repeats.
 *
 * A streamed reply is the content (default "Hello from the mock provider.") cut into `chunks`
 * deltas; when more chunks than characters are asked for, the default content becomes
 * "lorem " filler, one word per chunk. Tool calls stream their arguments in 3 deltas. With
 * `stream_options.include_usage`, a chat or completions stream ends with a usage chunk and, as
 * OpenAI's do, every other chunk carries `"usage": null`.
 *
 * CLI: node bench/mock/provider.js --port 5001 [--host 127.0.0.1]   (port 0, the default: any free port)
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import uWS from '@trufflesuite/uws-js-unofficial';

const DEFAULT_CONTENT = 'Hello from the mock provider.';
const DEFAULT_CHUNKS = 10;
const DEFAULT_TOOL_ARGS = '{"path":"README.md"}';
const TOOL_ARG_DELTAS = 3;
const FILLER_WORD = 'lorem ';
const LONG_STREAM_DELTA = FILLER_WORD.repeat(Math.ceil(16384 / FILLER_WORD.length)).slice(0, 16384);
const STREAM_ERROR_MESSAGE = 'mock stream error';
const MAX_RECORDED = 500;
const EMBEDDING_SIZE = 8;
const MODEL_IDS = ['gpt-4o', 'gpt-4o-mini', 'text-embedding-3-small', 'claude-sonnet-4-5'];
const MODELS_CREATED = 1700000000;
const JSON_HEADERS = { 'content-type': 'application/json' };
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };

/** @typedef {'chat' | 'completions' | 'embeddings' | 'responses' | 'count_tokens' | 'messages' | 'models' | 'not_found'} RouteName */

/** Checked in order: `/chat/completions` must win over `/completions`. */
const ROUTES = /** @type {const} */ ([
  { name: 'chat', method: 'POST', suffix: '/chat/completions' },
  { name: 'completions', method: 'POST', suffix: '/completions' },
  { name: 'embeddings', method: 'POST', suffix: '/embeddings' },
  { name: 'responses', method: 'POST', suffix: '/responses' },
  { name: 'count_tokens', method: 'POST', suffix: '/messages/count_tokens' },
  { name: 'messages', method: 'POST', suffix: '/messages' },
  { name: 'models', method: 'GET', suffix: '/models' },
]);

/** @typedef {RouteName | 'aborted'} CountName */

/** @type {CountName[]} */
const COUNT_NAMES = [...ROUTES.map((route) => route.name), 'not_found', 'aborted'];

/** Routes answering in Anthropic's shapes; all others use OpenAI's. */
const ANTHROPIC_ROUTES = new Set(['messages', 'count_tokens']);

/** Request fields whose strings count as input text. */
const TEXT_FIELDS = ['messages', 'system', 'instructions', 'input', 'prompt', 'content', 'text', 'output'];

/** @type {Record<number, [type: string, code: string]>} */
const OPENAI_ERRORS = {
  401: ['invalid_request_error', 'invalid_api_key'],
  404: ['invalid_request_error', 'not_found'],
  429: ['requests', 'rate_limit_exceeded'],
};

/** @type {Record<number, string>} */
const ANTHROPIC_ERRORS = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

/**
 * @typedef {object} RecordedRequest
 * @property {string} method
 * @property {string} path
 * @property {Record<string, string>} query
 * @property {Record<string, string>} headers  lower-cased names
 * @property {unknown} body  parsed JSON, the raw text, or null when empty
 * @property {RouteName} route
 */

/**
 * @typedef {object} ServerState
 * @property {string | undefined} requireKey
 * @property {RecordedRequest[]} requests
 * @property {Record<CountName, number>} counts
 * @property {EventEmitter} events
 * @property {Map<string, number>} seenByKey  requests seen per `x-mock-key`
 * @property {number} serial  the last number given to a `{serial}` in tool arguments
 * @property {Set<Exchange>} inFlight
 * @property {Script | null} script
 */

/**
 * One request/response pair. `open` turns false once the mock ended, dropped or lost it;
 * `res` must not be touched after that.
 * @typedef {object} Exchange
 * @property {ServerState} server
 * @property {uWS.HttpResponse} res
 * @property {string} path
 * @property {RouteName} route
 * @property {boolean} open
 * @property {number} status
 * @property {NodeJS.Timeout | undefined} timer
 * @property {(() => void) | undefined} onDrain  resumes a stream stalled by backpressure
 */

/**
 * @typedef {object} Controls
 * @property {string | undefined} content
 * @property {number} chunks
 * @property {string} toolArgs
 * @property {number} status  0 when no error is wanted
 * @property {string} retryAfter
 * @property {unknown} reset
 * @property {boolean} streamError
 * @property {number} delayMs
 * @property {number} chunkDelayMs
 * @property {number} streamBytes
 * @property {boolean} noUsage
 * @property {boolean} finishInLastDelta
 * @property {TextField} textField
 */

/** @typedef {'content' | 'reasoning' | 'refusal' | 'opening'} TextField */

/** @type {readonly TextField[]} */
const TEXT_FIELDS_STREAMED = ['content', 'reasoning', 'refusal', 'opening'];

/**
 * @typedef {object} ToolCall
 * @property {string} name
 * @property {string} args  JSON arguments, or a freeform call's raw input
 * @property {boolean} freeform  a custom tool's raw input rather than JSON arguments
 */

/**
 * @typedef {{ text: string } | { tool: { name: string, input: Record<string, unknown> | string } }} ScriptStep
 * @typedef {{ steps: ScriptStep[] }} Script
 */

/**
 * Everything a renderer needs to answer one request.
 * @typedef {object} Turn
 * @property {Record<string, any>} body
 * @property {string} model
 * @property {number} inputTokens
 * @property {number} outputTokens
 * @property {boolean} withUsage
 * @property {boolean} streamUsage  OpenAI `stream_options.include_usage`
 * @property {ToolCall | null} toolCall
 * @property {boolean} finishInLastDelta
 * @property {TextField} textField
 * @property {string} text  the whole reply text ('' for tool calls and `stream-bytes` streams)
 * @property {Iterable<string>} pieces  stream deltas: text, or tool-call arguments
 */

/**
 * How one route answers. Routes with `endsWithToolResult` call the first offered tool
 * unless the conversation already ends with a tool result.
 * @typedef {object} Renderer
 * @property {(turn: Turn) => object} json
 * @property {(turn: Turn) => Iterator<string>} [events]
 * @property {(body: Record<string, any>) => boolean} [endsWithToolResult]
 * @property {(body: Record<string, any>) => number} [results]  how many tool results the request carries (scripts)
 */

/**
 * @param {{ port?: number, host?: string, requireKey?: string, script?: Script }} [opts]
 */
export async function startMockProvider(opts = {}) {
  const host = opts.host ?? '127.0.0.1';
  const server = createState(opts.requireKey, opts.script ?? null);
  const app = /** @type {uWS.TemplatedApp & { close(): void }} */ (uWS.App());
  app.any('/*', (res, req) => acceptRequest(server, res, req));
  const listenSocket = await listen(app, host, opts.port ?? 0);
  const port = uWS.us_socket_local_port(listenSocket);
  let closed = false;
  return {
    url: `http://${host}:${port}`,
    port,
    requests: server.requests,
    events: server.events,
    counts: server.counts,
    reset: () => resetState(server),
    /** @param {Script | null} script */
    setScript: (script) => {
      server.script = script;
    },
    async close() {
      if (closed) return;
      closed = true;
      uWS.us_listen_socket_close(listenSocket);
      for (const ex of server.inFlight) dropConnection(ex);
      app.close(); // also closes idle keep-alive connections, which would keep the process alive
    },
  };
}

/**
 * @param {uWS.TemplatedApp} app
 * @param {string} host
 * @param {number} port
 * @returns {Promise<uWS.us_listen_socket>}
 */
function listen(app, host, port) {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (listenSocket) => {
      if (listenSocket) resolve(listenSocket);
      else reject(new Error(`mock provider could not listen on ${host}:${port}`));
    });
  });
}

/**
 * @param {string | undefined} requireKey
 * @param {Script | null} script
 * @returns {ServerState}
 */
function createState(requireKey, script) {
  return {
    requireKey,
    script,
    requests: [],
    counts: /** @type {Record<CountName, number>} */ (Object.fromEntries(COUNT_NAMES.map((name) => [name, 0]))),
    events: new EventEmitter(),
    seenByKey: new Map(),
    serial: 0,
    inFlight: new Set(),
  };
}

/** @param {ServerState} server */
function resetState(server) {
  server.requests.length = 0;
  server.seenByKey.clear();
  for (const name of COUNT_NAMES) server.counts[name] = 0;
}

// ---------------------------------------------------------------------------------------
// Request intake

/**
 * Runs synchronously inside the uWS handler: `req` is only valid here.
 * @param {ServerState} server
 * @param {uWS.HttpResponse} res
 * @param {uWS.HttpRequest} req
 */
function acceptRequest(server, res, req) {
  const method = req.getMethod().toUpperCase();
  const path = req.getUrl();
  const query = Object.fromEntries(new URLSearchParams(req.getQuery()));
  const headers = readHeaders(req);
  const route = matchRoute(method, path);
  /** @type {Exchange} */
  const ex = { server, res, path, route, open: true, status: 0, timer: undefined, onDrain: undefined };
  server.inFlight.add(ex);
  res.onAborted(() => onAborted(ex));
  readBody(res, (text) => onRequest(ex, { method, path, query, headers, body: parseBody(text), route }));
}

/** @param {uWS.HttpRequest} req */
function readHeaders(req) {
  /** @type {Record<string, string>} */
  const headers = {};
  req.forEach((name, value) => {
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  });
  return headers;
}

/**
 * @param {string} method
 * @param {string} path
 * @returns {RouteName}
 */
function matchRoute(method, path) {
  return ROUTES.find((route) => route.method === method && path.endsWith(route.suffix))?.name ?? 'not_found';
}

/**
 * uWS neuters each chunk's ArrayBuffer when the callback returns, so earlier chunks are
 * copied (`Buffer.from(arrayBuffer)` alone would only be a view); the last one is decoded
 * before returning.
 * @param {uWS.HttpResponse} res
 * @param {(text: string) => void} onBody
 */
function readBody(res, onBody) {
  /** @type {Buffer[]} */
  const parts = [];
  res.onData((chunk, isLast) => {
    if (!isLast) {
      parts.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
      return;
    }
    parts.push(Buffer.from(chunk));
    onBody(Buffer.concat(parts).toString('utf8'));
  });
}

/** @param {string} text */
function parseBody(text) {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * @param {Exchange} ex
 * @param {RecordedRequest} request
 */
function onRequest(ex, request) {
  const { server } = ex;
  record(server, request);
  if (!isAuthorized(server.requireKey, request.headers)) {
    sendError(ex, 401, 'Incorrect API key provided.');
    return;
  }
  const controls = readControls(server, request);
  later(ex, controls.delayMs, () => respond(ex, request, controls));
}

/**
 * @param {ServerState} server
 * @param {RecordedRequest} request
 */
function record(server, request) {
  server.requests.push(request);
  if (server.requests.length > MAX_RECORDED) server.requests.shift();
  server.counts[request.route] += 1;
  server.events.emit('request', request);
}

/**
 * @param {string | undefined} requireKey
 * @param {Record<string, string>} headers
 */
function isAuthorized(requireKey, headers) {
  return (
    requireKey === undefined ||
    headers.authorization === `Bearer ${requireKey}` ||
    headers['x-api-key'] === requireKey ||
    headers['api-key'] === requireKey
  );
}

/**
 * @param {ServerState} server
 * @param {RecordedRequest} request
 * @returns {Controls}
 */
function readControls(server, request) {
  const fromBody = isObject(request.body) && isObject(request.body.mock) ? request.body.mock : {};
  /** @param {string} name */
  const read = (name) => request.headers[`x-mock-${name}`] ?? fromBody[name];
  const contentHeader = request.headers['x-mock-content'];
  const toolArgs = read('tool-args') ?? DEFAULT_TOOL_ARGS;
  const failing = failuresApply(server, read('key'), read('fail-times'));
  return {
    content: contentHeader === undefined ? fromBody.content : decodeURIComponent(contentHeader),
    chunks: Number(read('chunks')) || DEFAULT_CHUNKS,
    toolArgs: numbered(server, typeof toolArgs === 'string' ? toolArgs : JSON.stringify(toolArgs)),
    status: failing ? Number(read('status')) || 0 : 0,
    retryAfter: String(read('retry-after') ?? 1),
    reset: failing ? read('reset') : undefined,
    streamError: failing && isOn(read('stream-error')),
    delayMs: Number(read('delay-ms')) || 0,
    chunkDelayMs: Number(read('chunk-delay-ms')) || 0,
    streamBytes: Number(read('stream-bytes')) || 0,
    noUsage: isOn(read('no-usage')),
    finishInLastDelta: isOn(read('finish-in-last-delta')),
    textField: TEXT_FIELDS_STREAMED.find((field) => field === read('text-field')) ?? 'content',
  };
}

/**
 * `args` with each `{serial}` replaced by the next number.
 * @param {ServerState} server
 * @param {string} args
 */
function numbered(server, args) {
  return args.includes('{serial}') ? args.replaceAll('{serial}', () => String(++server.serial)) : args;
}

/**
 * Failure controls apply to every request, unless `key` and `fail-times` are both given:
 * then only to the first `fail-times` requests seen with that key.
 * @param {ServerState} server
 * @param {unknown} key
 * @param {unknown} failTimes
 */
function failuresApply(server, key, failTimes) {
  if (key === undefined || failTimes === undefined) return true;
  const seen = server.seenByKey.get(String(key)) ?? 0;
  server.seenByKey.set(String(key), seen + 1);
  return seen < Number(failTimes);
}

/**
 * @param {unknown} value
 * @returns {value is Record<string, any>}
 */
function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** @param {unknown} value */
function isOn(value) {
  return ['1', 'true'].includes(String(value));
}

// ---------------------------------------------------------------------------------------
// Answering

/**
 * @param {Exchange} ex
 * @param {RecordedRequest} request
 * @param {Controls} controls
 */
function respond(ex, request, controls) {
  const { route } = request;
  if (controls.reset === 'before') return dropConnection(ex);
  if (route === 'not_found') return sendError(ex, 404, `Invalid URL (${request.method} ${request.path})`);
  if (controls.status) {
    /** @type {Record<string, string>} */
    const headers = controls.status === 429 ? { 'retry-after': controls.retryAfter } : {};
    return sendError(ex, controls.status, `mock error ${controls.status}`, headers);
  }
  const renderer = RENDERERS[route];
  const body = isObject(request.body) ? request.body : {};
  if (body.stream === true && renderer.events) {
    const events = controls.streamError ? streamErrorEvents(route) : renderer.events(turnFor(renderer, body, controls, true, ex.server.script));
    return sendStream(ex, events, controls.chunkDelayMs);
  }
  const json = renderer.json(turnFor(renderer, body, controls, false, ex.server.script));
  return controls.reset === 'mid' ? sendTruncated(ex, json) : sendJson(ex, 200, json);
}

/**
 * @param {Renderer} renderer
 * @param {Record<string, any>} body
 * @param {Controls} controls
 * @param {boolean} streaming
 * @param {Script | null} script
 * @returns {Turn}
 */
function turnFor(renderer, body, controls, streaming, script) {
  /** @type {ToolCall | null} */
  let toolCall = null;
  if (script !== null && renderer.results !== undefined) {
    const step = scriptStep(script, renderer.results(body));
    if ('tool' in step && offersTools(body)) toolCall = scriptedCall(step.tool);
    else controls = { ...controls, content: 'text' in step ? step.text : lastScriptText(script) };
  } else if (wantsToolCall(renderer, body)) {
    toolCall = { name: toolName(body.tools[0]), args: controls.toolArgs, freeform: false };
  }
  const output = toolCall ? toolOutput(toolCall, streaming) : textOutput(controls, streaming);
  const withUsage = !controls.noUsage;
  return {
    body,
    model: typeof body.model === 'string' ? body.model : 'mock-model',
    inputTokens: Math.ceil(textChars(body) / 4),
    outputTokens: Math.ceil(output.chars / 4),
    withUsage,
    streamUsage: withUsage && body.stream_options?.include_usage === true,
    toolCall,
    finishInLastDelta: controls.finishInLastDelta,
    textField: controls.textField,
    text: output.text,
    pieces: streaming && controls.reset === 'mid' ? cutMidway(output.pieces, Math.ceil(output.count / 2)) : output.pieces,
  };
}

/**
 * @typedef {object} Output
 * @property {string} text
 * @property {Iterable<string>} pieces
 * @property {number} count  number of pieces
 * @property {number} chars  total characters of the pieces
 */

/**
 * @param {Controls} controls
 * @param {boolean} streaming
 * @returns {Output}
 */
function textOutput(controls, streaming) {
  if (streaming && controls.streamBytes > 0) {
    // Not kept as one string: long streams don't repeat their text in closing events.
    const count = Math.ceil(controls.streamBytes / LONG_STREAM_DELTA.length);
    return { text: '', pieces: repeat(LONG_STREAM_DELTA, count), count, chars: count * LONG_STREAM_DELTA.length };
  }
  const text = controls.content ?? (streaming && controls.chunks > DEFAULT_CONTENT.length ? FILLER_WORD.repeat(controls.chunks) : DEFAULT_CONTENT);
  const pieces = streaming ? splitEvenly(text, controls.chunks).filter(Boolean) : [text];
  return { text, pieces, count: pieces.length, chars: text.length };
}

/**
 * @param {ToolCall} toolCall
 * @param {boolean} streaming
 * @returns {Output}
 */
function toolOutput(toolCall, streaming) {
  const pieces = streaming ? splitEvenly(toolCall.args, TOOL_ARG_DELTAS) : [toolCall.args];
  return { text: '', pieces, count: pieces.length, chars: toolCall.args.length };
}

/**
 * @param {Script} script
 * @param {number} results  tool results the request carries
 * @returns {ScriptStep}
 */
function scriptStep(script, results) {
  return script.steps[Math.min(results, script.steps.length - 1)] ?? { text: DEFAULT_CONTENT };
}

/** @param {Script} script */
function lastScriptText(script) {
  const texts = script.steps.filter((step) => 'text' in step);
  return texts.length > 0 ? /** @type {{ text: string }} */ (texts.at(-1)).text : DEFAULT_CONTENT;
}

/**
 * @param {{ name: string, input: Record<string, unknown> | string }} tool
 * @returns {ToolCall}
 */
function scriptedCall(tool) {
  const freeform = typeof tool.input === 'string';
  return { name: tool.name, args: freeform ? /** @type {string} */ (tool.input) : JSON.stringify(tool.input), freeform };
}

/**
 * Tools offered in `tools`, or in an `additional_tools` input item (Codex code mode).
 * @param {Record<string, any>} body
 */
function offersTools(body) {
  if (Array.isArray(body.tools) && body.tools.length > 0) return true;
  return Array.isArray(body.input) && body.input.some((/** @type {any} */ item) => isObject(item) && item.type === 'additional_tools');
}

/**
 * Chat tool results are `tool` messages.
 * @param {Record<string, any>} body
 */
function chatResults(body) {
  return (Array.isArray(body.messages) ? body.messages : []).filter((/** @type {any} */ m) => isObject(m) && m.role === 'tool').length;
}

/**
 * Responses tool results are `…_output` items answering a call id.
 * @param {Record<string, any>} body
 */
function responsesResults(body) {
  const input = Array.isArray(body.input) ? body.input : [];
  return input.filter((/** @type {any} */ item) => isObject(item) && typeof item.type === 'string' && item.type.endsWith('_output') && 'call_id' in item).length;
}

/**
 * Anthropic tool results are `tool_result` blocks in user messages.
 * @param {Record<string, any>} body
 */
function messagesResults(body) {
  let n = 0;
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(message) || message.role !== 'user' || !Array.isArray(message.content)) continue;
    n += message.content.filter((/** @type {any} */ block) => isObject(block) && block.type === 'tool_result').length;
  }
  return n;
}

/**
 * @param {Renderer} renderer
 * @param {Record<string, any>} body
 */
function wantsToolCall(renderer, body) {
  const offered = Array.isArray(body.tools) && body.tools.length > 0;
  return offered && renderer.endsWithToolResult !== undefined && !renderer.endsWithToolResult(body);
}

/** @param {unknown} list */
function lastItem(list) {
  return Array.isArray(list) ? list.at(-1) : undefined;
}

/**
 * Anthropic tool results are blocks in the content of the last user message.
 * @param {Record<string, any>} body
 */
function lastUserMessageHasToolResult(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const content = messages.filter((message) => message.role === 'user').at(-1)?.content;
  return Array.isArray(content) && content.some((block) => block.type === 'tool_result');
}

/**
 * Chat tools name their function under `function`; Responses and Anthropic tools don't.
 * @param {Record<string, any>} tool
 * @returns {string}
 */
function toolName(tool) {
  return tool.function?.name ?? tool.name;
}

/**
 * Rough character count of the request's text, for token estimates.
 * @param {unknown} value
 * @returns {number}
 */
function textChars(value) {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((sum, item) => sum + textChars(item), 0);
  if (!isObject(value)) return 0;
  return TEXT_FIELDS.reduce((sum, field) => sum + textChars(value[field]), 0);
}

/**
 * `text` cut into `count` pieces of (nearly) equal length; some are empty if it is shorter.
 * @param {string} text
 * @param {number} count
 */
function splitEvenly(text, count) {
  return Array.from({ length: count }, (_, i) =>
    text.slice(Math.floor((i * text.length) / count), Math.floor(((i + 1) * text.length) / count)),
  );
}

/**
 * @param {string} value
 * @param {number} count
 */
function* repeat(value, count) {
  for (let i = 0; i < count; i++) yield value;
}

/**
 * @param {Iterable<string>} pieces
 * @param {number} keep
 */
function* cutMidway(pieces, keep) {
  let sent = 0;
  for (const piece of pieces) {
    if (sent++ === keep) break;
    yield piece;
  }
  throw new Error('mock reset mid-stream'); // caught by writeEvents, which drops the connection
}

// ---------------------------------------------------------------------------------------
// Wire shapes

/** @param {string} prefix */
function newId(prefix) {
  return prefix + randomUUID().replaceAll('-', '').slice(0, 24);
}

function nowSeconds() {
  return Math.floor(Date.now() / 1000);
}

/** @param {unknown} data */
function sseData(data) {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/**
 * @param {string} type
 * @param {unknown} data
 */
function sseEvent(type, data) {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * `{ usage }` when the turn reports usage, else nothing.
 * @param {Turn} turn
 * @param {object} usage
 */
function usageField(turn, usage) {
  return turn.withUsage ? { usage } : {};
}

/** @param {Turn} turn */
function openaiUsage(turn) {
  return { prompt_tokens: turn.inputTokens, completion_tokens: turn.outputTokens, total_tokens: turn.inputTokens + turn.outputTokens };
}

/**
 * @param {RouteName} route
 * @param {number} status
 * @param {string} message
 */
function errorBody(route, status, message) {
  if (ANTHROPIC_ROUTES.has(route)) {
    const type = ANTHROPIC_ERRORS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
    return { type: 'error', error: { type, message } };
  }
  const [type, code] = OPENAI_ERRORS[status] ?? (status >= 500 ? ['server_error', 'server_error'] : ['invalid_request_error', null]);
  return { error: { message, type, code, param: null } };
}

/** @param {RouteName} route */
function streamErrorEvents(route) {
  const event = ANTHROPIC_ROUTES.has(route)
    ? sseEvent('error', { type: 'error', error: { type: 'overloaded_error', message: STREAM_ERROR_MESSAGE } })
    : sseData({ error: { message: STREAM_ERROR_MESSAGE, type: 'server_error', code: 'server_error', param: null } });
  return [event].values();
}

// OpenAI chat completions

/** @param {Turn} turn */
function chatJson(turn) {
  const { toolCall } = turn;
  const message = toolCall
    ? { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: newId('call_'), type: 'function', function: { name: toolCall.name, arguments: toolCall.args } }] }
    : { role: 'assistant', content: turn.text, refusal: null };
  return {
    id: newId('chatcmpl-'),
    object: 'chat.completion',
    created: nowSeconds(),
    model: turn.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: toolCall ? 'tool_calls' : 'stop' }],
    ...usageField(turn, openaiUsage(turn)),
  };
}

/** @param {Turn} turn */
function* chatEvents(turn) {
  const head = { id: newId('chatcmpl-'), object: 'chat.completion.chunk', created: nowSeconds(), model: turn.model };
  /**
   * @param {object} delta
   * @param {string | null} [finishReason]
   */
  // With include_usage, OpenAI gives every chunk a null usage; the last, with no choices, holds the figures.
  const nullUsage = turn.streamUsage ? { usage: null } : {};
  const chunk = (delta, finishReason = null) => sseData({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...nullUsage });
  const { toolCall } = turn;
  if (toolCall) {
    const call = { index: 0, id: newId('call_'), type: 'function', function: { name: toolCall.name, arguments: '' } };
    yield chunk({ role: 'assistant', content: null, tool_calls: [call] });
    for (const piece of turn.pieces) yield chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
  } else if (turn.finishInLastDelta) {
    yield chunk({ role: 'assistant', content: '' });
    const pieces = [...turn.pieces];
    for (const [i, piece] of pieces.entries()) yield chunk({ content: piece }, i === pieces.length - 1 ? 'stop' : null);
  } else {
    const field = turn.textField === 'reasoning' ? 'reasoning_content' : turn.textField === 'refusal' ? 'refusal' : 'content';
    yield chunk({ role: 'assistant', content: '' });
    for (const piece of turn.pieces) yield chunk({ [field]: piece });
  }
  if (!turn.finishInLastDelta || toolCall) yield chunk({}, toolCall ? 'tool_calls' : 'stop');
  if (turn.streamUsage) yield sseData({ ...head, choices: [], usage: openaiUsage(turn) });
  yield 'data: [DONE]\n\n';
}

// OpenAI legacy completions

/** @param {Turn} turn */
function completionJson(turn) {
  return {
    id: newId('cmpl-'),
    object: 'text_completion',
    created: nowSeconds(),
    model: turn.model,
    choices: [{ text: turn.text, index: 0, logprobs: null, finish_reason: 'stop' }],
    ...usageField(turn, openaiUsage(turn)),
  };
}

/** @param {Turn} turn */
function* completionEvents(turn) {
  const head = { id: newId('cmpl-'), object: 'text_completion', created: nowSeconds(), model: turn.model };
  /**
   * @param {string} text
   * @param {string | null} [finishReason]
   */
  const nullUsage = turn.streamUsage ? { usage: null } : {};
  const chunk = (text, finishReason = null) => sseData({ ...head, choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }], ...nullUsage });
  for (const piece of turn.pieces) yield chunk(piece);
  yield chunk('', 'stop');
  if (turn.streamUsage) yield sseData({ ...head, choices: [], usage: openaiUsage(turn) });
  yield 'data: [DONE]\n\n';
}

// OpenAI embeddings

/** @param {Turn} turn */
function embeddingsJson(turn) {
  const { input } = turn.body;
  const inputs = Array.isArray(input) && typeof input[0] !== 'number' ? input : [input];
  const base64 = turn.body.encoding_format === 'base64';
  return {
    object: 'list',
    data: inputs.map((_, index) => {
      const vector = Array.from({ length: EMBEDDING_SIZE }, (_, k) => Math.round(Math.sin(index + k + 1) * 1e6) / 1e6);
      const embedding = base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
      return { object: 'embedding', index, embedding };
    }),
    model: turn.model,
    ...usageField(turn, { prompt_tokens: turn.inputTokens, total_tokens: turn.inputTokens }),
  };
}

// OpenAI responses

/**
 * @param {Turn} turn
 * @param {{ id: string, created_at: number }} head
 * @param {string} status
 * @param {object[]} output
 */
function responseObject(turn, head, status, output) {
  const usage = { input_tokens: turn.inputTokens, output_tokens: turn.outputTokens, total_tokens: turn.inputTokens + turn.outputTokens };
  return { ...head, object: 'response', status, model: turn.model, output, ...(status === 'completed' ? usageField(turn, usage) : {}) };
}

/**
 * @param {Turn} turn
 * @param {string} itemId
 * @param {string} callId
 */
function responseOutputItem(turn, itemId, callId) {
  const { toolCall } = turn;
  if (toolCall?.freeform) return { type: 'custom_tool_call', id: itemId, call_id: callId, name: toolCall.name, input: toolCall.args, status: 'completed' };
  return toolCall
    ? { type: 'function_call', id: itemId, call_id: callId, name: toolCall.name, arguments: toolCall.args, status: 'completed' }
    : { type: 'message', id: itemId, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
}

/** @param {Turn} turn */
function itemPrefix(turn) {
  if (turn.toolCall === null) return 'msg_';
  return turn.toolCall.freeform ? 'ctc_' : 'fc_';
}

/** @param {Turn} turn */
function responseJson(turn) {
  const item = responseOutputItem(turn, newId(itemPrefix(turn)), newId('call_'));
  return responseObject(turn, { id: newId('resp_'), created_at: nowSeconds() }, 'completed', [item]);
}

/** @param {Turn} turn */
function* responseEvents(turn) {
  let sequence = 0;
  /**
   * @param {string} type
   * @param {object} fields
   */
  const event = (type, fields) => sseEvent(type, { type, sequence_number: sequence++, ...fields });
  const head = { id: newId('resp_'), created_at: nowSeconds() };
  const done = responseOutputItem(turn, newId(itemPrefix(turn)), newId('call_'));
  const at = { item_id: done.id, output_index: 0 };
  /** @type {object} the item as it stands complete */
  let final = done;
  yield event('response.created', { response: responseObject(turn, head, 'in_progress', []) });
  if (done.type === 'function_call') {
    yield event('response.output_item.added', { output_index: 0, item: { ...done, arguments: '', status: 'in_progress' } });
    for (const delta of turn.pieces) yield event('response.function_call_arguments.delta', { ...at, delta });
    yield event('response.function_call_arguments.done', { ...at, arguments: done.arguments });
  } else if (done.type === 'custom_tool_call') {
    yield event('response.output_item.added', { output_index: 0, item: { ...done, input: '', status: 'in_progress' } });
    for (const delta of turn.pieces) yield event('response.custom_tool_call_input.delta', { ...at, delta });
    yield event('response.custom_tool_call_input.done', { ...at, input: done.input });
  } else if (turn.textField === 'reasoning') {
    const summary = { type: 'summary_text', text: turn.text };
    const reasoning = { type: 'reasoning', id: newId('rs_'), summary: [summary] };
    const on = { item_id: reasoning.id, output_index: 0, summary_index: 0 };
    yield event('response.output_item.added', { output_index: 0, item: { ...reasoning, summary: [] } });
    yield event('response.reasoning_summary_part.added', { ...on, part: { ...summary, text: '' } });
    for (const delta of turn.pieces) yield event('response.reasoning_summary_text.delta', { ...on, delta });
    yield event('response.reasoning_summary_text.done', { ...on, text: turn.text });
    yield event('response.reasoning_summary_part.done', { ...on, part: summary });
    final = reasoning;
  } else {
    const refusal = turn.textField === 'refusal';
    const part = refusal ? { type: 'refusal', refusal: turn.text } : { type: 'output_text', text: turn.text, annotations: [] };
    const opening = turn.textField === 'opening';
    const item = refusal ? { ...done, content: [part] } : done;
    yield event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: opening ? [part] : [] } });
    if (!opening) {
      yield event('response.content_part.added', { ...at, content_index: 0, part: refusal ? { ...part, refusal: '' } : { ...part, text: '' } });
      const type = refusal ? 'response.refusal.delta' : 'response.output_text.delta';
      for (const delta of turn.pieces) yield event(type, { ...at, content_index: 0, delta, ...(refusal ? {} : { logprobs: [] }) });
      yield refusal
        ? event('response.refusal.done', { ...at, content_index: 0, refusal: turn.text })
        : event('response.output_text.done', { ...at, content_index: 0, text: turn.text, logprobs: [] });
      yield event('response.content_part.done', { ...at, content_index: 0, part });
    }
    final = item;
  }
  yield event('response.output_item.done', { output_index: 0, item: final });
  yield event('response.completed', { response: responseObject(turn, head, 'completed', [final]) });
}

// Anthropic messages

/** @param {Turn} turn */
function messageHead(turn) {
  return { id: newId('msg_'), type: 'message', role: 'assistant', model: turn.model };
}

/** @param {Turn} turn */
function messageJson(turn) {
  const { toolCall } = turn;
  const content = toolCall
    ? [{ type: 'tool_use', id: newId('toolu_'), name: toolCall.name, input: JSON.parse(toolCall.args) }]
    : [{ type: 'text', text: turn.text }];
  return {
    ...messageHead(turn),
    content,
    stop_reason: toolCall ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    ...usageField(turn, { input_tokens: turn.inputTokens, output_tokens: turn.outputTokens }),
  };
}

/** @param {Turn} turn */
function* messageEvents(turn) {
  /**
   * @param {string} type
   * @param {object} fields
   */
  const event = (type, fields) => sseEvent(type, { type, ...fields });
  const { toolCall } = turn;
  const message = { ...messageHead(turn), content: [], stop_reason: null, stop_sequence: null };
  yield event('message_start', { message: { ...message, ...usageField(turn, { input_tokens: turn.inputTokens, output_tokens: 1 }) } });
  const thinking = !toolCall && turn.textField === 'reasoning';
  const opening = !toolCall && turn.textField === 'opening';
  const block = toolCall
    ? { type: 'tool_use', id: newId('toolu_'), name: toolCall.name, input: {} }
    : thinking
      ? { type: 'thinking', thinking: '', signature: '' }
      : { type: 'text', text: opening ? turn.text : '' };
  yield event('content_block_start', { index: 0, content_block: block });
  yield event('ping', {});
  for (const piece of opening ? [] : turn.pieces) {
    const delta = toolCall
      ? { type: 'input_json_delta', partial_json: piece }
      : thinking
        ? { type: 'thinking_delta', thinking: piece }
        : { type: 'text_delta', text: piece };
    yield event('content_block_delta', { index: 0, delta });
  }
  if (thinking) yield event('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'c2lnbmF0dXJl' } });
  yield event('content_block_stop', { index: 0 });
  const delta = { stop_reason: toolCall ? 'tool_use' : 'end_turn', stop_sequence: null };
  yield event('message_delta', { delta, ...usageField(turn, { output_tokens: turn.outputTokens }) });
  yield event('message_stop', {});
}

/** @type {Record<Exclude<RouteName, 'not_found'>, Renderer>} */
const RENDERERS = {
  chat: { json: chatJson, events: chatEvents, endsWithToolResult: (body) => lastItem(body.messages)?.role === 'tool', results: chatResults },
  completions: { json: completionJson, events: completionEvents },
  embeddings: { json: embeddingsJson },
  responses: { json: responseJson, events: responseEvents, endsWithToolResult: (body) => lastItem(body.input)?.type === 'function_call_output', results: responsesResults },
  count_tokens: { json: (turn) => ({ input_tokens: turn.inputTokens }) },
  messages: { json: messageJson, events: messageEvents, endsWithToolResult: lastUserMessageHasToolResult, results: messagesResults },
  models: { json: () => ({ object: 'list', data: MODEL_IDS.map((id) => ({ id, object: 'model', created: MODELS_CREATED, owned_by: 'mock' })) }) },
};

// ---------------------------------------------------------------------------------------
// Writing to uWS

/**
 * Runs `fn` after `ms` (at once when 0) unless the exchange ended meanwhile.
 * @param {Exchange} ex
 * @param {number} ms
 * @param {() => void} fn
 */
function later(ex, ms, fn) {
  if (ms <= 0) return fn();
  ex.timer = setTimeout(() => {
    ex.timer = undefined;
    if (ex.open) fn();
  }, ms);
}

/**
 * Call while corked.
 * @param {Exchange} ex
 * @param {number} status
 * @param {Record<string, string>} headers
 */
function writeHead(ex, status, headers) {
  ex.status = status;
  ex.res.writeStatus(`${status} ${STATUS_CODES[status] ?? 'Unknown'}`);
  for (const [name, value] of Object.entries(headers)) ex.res.writeHeader(name, value);
}

/**
 * @param {Exchange} ex
 * @param {number} status
 * @param {object} body
 * @param {Record<string, string>} [headers]
 */
function sendJson(ex, status, body, headers = {}) {
  ex.res.cork(() => {
    writeHead(ex, status, { ...JSON_HEADERS, ...headers });
    ex.res.end(JSON.stringify(body));
  });
  finish(ex);
}

/**
 * @param {Exchange} ex
 * @param {number} status
 * @param {string} message
 * @param {Record<string, string>} [headers]
 */
function sendError(ex, status, message, headers) {
  sendJson(ex, status, errorBody(ex.route, status, message), headers);
}

/**
 * Headers and the first half of the body, then the connection drops.
 * @param {Exchange} ex
 * @param {object} body
 */
function sendTruncated(ex, body) {
  const text = JSON.stringify(body);
  ex.res.cork(() => {
    writeHead(ex, 200, JSON_HEADERS);
    ex.res.write(text.slice(0, text.length >> 1));
  });
  dropAfterFlush(ex);
}

/**
 * @param {Exchange} ex
 * @param {Iterator<string>} events
 * @param {number} chunkDelayMs
 */
function sendStream(ex, events, chunkDelayMs) {
  ex.res.onWritable(() => {
    const resume = ex.onDrain;
    ex.onDrain = undefined;
    resume?.();
    return true;
  });
  pump(ex, events, chunkDelayMs);
}

/**
 * @typedef {{ outcome: 'ended' } | { outcome: 'reset' } | { outcome: 'backpressure' } | { outcome: 'drip', due: string }} PumpResult
 */

/**
 * Writes events (after the headers, on the first call) until the stream ends, the socket
 * pushes back, or a dripping stream's next event is due later.
 * @param {Exchange} ex
 * @param {Iterator<string>} events
 * @param {number} chunkDelayMs
 * @param {string} [due]  an event read on the previous call, to write first
 */
function pump(ex, events, chunkDelayMs, due) {
  /** @type {PumpResult | undefined} */
  let written;
  ex.res.cork(() => {
    if (ex.status === 0) writeHead(ex, 200, SSE_HEADERS);
    written = writeEvents(ex.res, events, chunkDelayMs > 0, due);
  });
  const result = /** @type {PumpResult} */ (written);
  if (result.outcome === 'ended') finish(ex);
  else if (result.outcome === 'reset') dropAfterFlush(ex);
  else if (result.outcome === 'backpressure') ex.onDrain = () => pump(ex, events, chunkDelayMs);
  else later(ex, chunkDelayMs, () => pump(ex, events, chunkDelayMs, result.due));
}

/**
 * Reads one event ahead so a dripping stream ends right after its last event.
 * @param {uWS.HttpResponse} res
 * @param {Iterator<string>} events
 * @param {boolean} dripping  write one event per call
 * @param {string | undefined} current  event to write first
 * @returns {PumpResult}
 */
function writeEvents(res, events, dripping, current) {
  for (;;) {
    // A false return means uWS buffered the data; wait for onWritable before writing more.
    if (current !== undefined && !res.write(current)) return { outcome: 'backpressure' };
    let next;
    try {
      next = events.next();
    } catch {
      return { outcome: 'reset' }; // the event source failed: a `reset: mid` stream reached its middle
    }
    if (next.done) {
      res.end();
      return { outcome: 'ended' };
    }
    if (dripping && current !== undefined) return { outcome: 'drip', due: next.value };
    current = next.value;
  }
}

/** @param {Exchange} ex */
function settle(ex) {
  ex.open = false;
  clearTimeout(ex.timer);
  ex.server.inFlight.delete(ex);
}

/** @param {Exchange} ex */
function finish(ex) {
  settle(ex);
  ex.server.events.emit('finished', { path: ex.path, route: ex.route, status: ex.status });
}

/** @param {Exchange} ex */
function dropConnection(ex) {
  settle(ex);
  ex.res.close();
}

/**
 * Closing inside a uWS callback would discard what uWS still holds corked (it corks the
 * socket while it runs request handlers), so wait for it to flush.
 * @param {Exchange} ex
 */
function dropAfterFlush(ex) {
  later(ex, 1, () => dropConnection(ex));
}

/**
 * uWS calls this when the connection closes before the response ended, including after
 * our own `res.close()`; only the client's closes count as aborts.
 * @param {Exchange} ex
 */
function onAborted(ex) {
  if (!ex.open) return;
  settle(ex);
  ex.server.counts.aborted += 1;
  ex.server.events.emit('aborted', { path: ex.path, route: ex.route });
}

// ---------------------------------------------------------------------------------------
// CLI

/** @param {string[]} args */
async function main(args) {
  const { values } = parseArgs({ args, options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } } });
  const mock = await startMockProvider({ port: Number(values.port), host: values.host });
  console.log(`mock provider listening on ${mock.url}`);
  const stop = () => void mock.close();
  process.once('SIGINT', stop).once('SIGTERM', stop);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv.slice(2));
