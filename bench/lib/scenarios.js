// @ts-check
import { readFileSync } from 'node:fs';

/**
 * The load scenarios. Each one describes a request, how many connections send it, and how a
 * complete answer ends; the same request goes straight to the mock provider and through the
 * proxy, which forwards `/v1/...` paths unchanged to its `--upstream-url`.
 */

/** @typedef {import('./load-generator.js').LoadRequest} LoadRequest */

/**
 * @typedef {object} Shape  what a scenario sends, after command-line overrides
 * @property {number} connections
 * @property {number} promptBytes
 * @property {number | null} chunks  content chunks of a streamed answer; null when not streaming
 */

/**
 * @typedef {object} Scenario
 * @property {string} name
 * @property {string} description
 * @property {Shape} shape  the defaults
 * @property {(shape: Shape) => LoadRequest} request
 * @property {'redis'} [store]  the proxy meters against a redis-server started for the scenario
 * @property {number} [wasmRules]  the proxy runs with this many WASM rules installed
 * @property {number | 'auto'} [ioThreads]  the proxy's --io-threads (default 1)
 * @property {'pass-through'} [through]  the proxy side is bench/yardstick/pass-through.js, not svc
 * @property {string} [versus]  the scenario whose proxy this one's is loaded in turn with (same request and shape)
 */

/** @typedef {Partial<Shape>} ShapeOverrides */

const KB = 1024;
const SYSTEM_PROMPT = 'You are a coding assistant. Answer briefly and show code where it helps.';
const PROMPT_TEXT =
  'Refactor the session cache so that entries expire after the configured idle time. ' +
  'The current implementation in src/cache/session.ts keeps every entry until restart, which ' +
  'leaks memory on long-running workers. Keep the public API unchanged, add a unit test for ' +
  'expiry, and explain any trade-offs in the pull request description.\n';

/**
 * About `bytes` bytes of plausible prompt text.
 * @param {number} bytes
 */
function promptOf(bytes) {
  return PROMPT_TEXT.repeat(Math.ceil(bytes / PROMPT_TEXT.length)).slice(0, bytes);
}

/**
 * OpenAI chat completion, streamed when the shape has chunks.
 * @param {Shape} shape
 * @returns {LoadRequest}
 */
function openaiChat({ promptBytes, chunks }) {
  const messages = [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: promptOf(promptBytes) },
  ];
  if (chunks === null) {
    return {
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
      expectEnd: '}',
    };
  }
  return {
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', 'x-mock-chunks': String(chunks) },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } }),
    expectEnd: 'data: [DONE]\n\n',
  };
}

/** The mock's pause between a trickled stream's events. */
const TRICKLE_MS = 1;

/**
 * As openaiChat's stream, with the mock writing each event a millisecond after the one before, as
 * a provider streams tokens: most events reach the proxy in a read of their own.
 * @param {Shape} shape
 * @returns {LoadRequest}
 */
function openaiTrickle(shape) {
  const request = openaiChat(shape);
  return { ...request, headers: { ...request.headers, 'x-mock-chunk-delay-ms': String(TRICKLE_MS) } };
}

/**
 * Anthropic message, streamed.
 * @param {Shape} shape
 * @returns {LoadRequest}
 */
function anthropicStream({ promptBytes, chunks }) {
  return {
    path: '/v1/messages',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-mock-chunks': String(chunks) },
    body: JSON.stringify({
      model: 'claude-sonnet-4',
      max_tokens: 1024,
      system: SYSTEM_PROMPT,
      messages: [{ role: 'user', content: promptOf(promptBytes) }],
      stream: true,
    }),
    expectEnd: 'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  };
}

/**
 * OpenAI chat offering a shell tool: the mock answers with a call to it, a command every
 * example WASM rule allows (with rules installed, each runs on it but those that declare programs
 * the command does not run, `rm`: three of the ten).
 * @param {Shape} shape
 * @returns {LoadRequest}
 */
function openaiToolCall({ promptBytes }) {
  return toolCallRequest(promptBytes, 'git status && ls -la src/');
}

/**
 * As `openaiToolCall`, the mock numbering each call's command (`ls -la src/17`): no call is one
 * seen before.
 * @param {Shape} shape
 * @returns {LoadRequest}
 */
function openaiNewToolCall({ promptBytes }) {
  return toolCallRequest(promptBytes, 'git status && ls -la src/{serial}');
}

/**
 * @param {number} promptBytes
 * @param {string} command  the shell command the mock's tool call runs
 * @returns {LoadRequest}
 */
function toolCallRequest(promptBytes, command) {
  const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }];
  return {
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', 'x-mock-tool-args': JSON.stringify({ command }) },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: promptOf(promptBytes) }], tools }),
    expectEnd: '}',
  };
}

const CLAUDE_CODE_REQUEST = new URL('../../test/fixtures/harness-requests/claude-code-default.json', import.meta.url);

/**
 * The headers Claude Code 2.1.330 sends with every request (test/proxy/harness.test.ts), its session
 * the one the captured body's metadata names: the proxy knows the harness and the session from
 * them, as it does a real turn's, and need not name the session by hashing its first turns.
 */
const CLAUDE_CODE_HEADERS = {
  'user-agent': 'claude-cli/2.1.330 (external, sdk-cli)',
  'x-app': 'cli',
  'x-claude-code-session-id': '00000000-0000-4000-8000-000000000001',
  'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
  'anthropic-version': '2023-06-01',
  'x-stainless-lang': 'js',
  'x-stainless-package-version': '0.137.0',
  'x-stainless-runtime': 'node',
};

/**
 * The request Claude Code sent (`claude -p` with default settings, captured: its system prompt, 18
 * tools, 47 KB) with the headers it sends, streamed. The prompt size does not change it.
 * @param {Shape} shape
 * @returns {LoadRequest}
 */
function claudeCodeTurn({ chunks }) {
  const { body } = JSON.parse(readFileSync(CLAUDE_CODE_REQUEST, 'utf8'));
  return {
    path: '/v1/messages',
    headers: { 'content-type': 'application/json', ...CLAUDE_CODE_HEADERS, 'x-mock-chunks': String(chunks) },
    body: JSON.stringify(body),
    expectEnd: 'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  };
}

/** @type {Scenario[]} */
export const SCENARIOS = [
  {
    name: 'chat',
    description: 'non-streaming chat completion, 1 KB prompt',
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiChat,
  },
  {
    name: 'chat-io2',
    description: "as chat, with 2 I/O threads (its proxy and chat's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiChat,
    ioThreads: 2,
    versus: 'chat',
  },
  {
    name: 'chat-auto',
    description: "as chat, with --io-threads auto, the proxy's default (its proxy and chat's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiChat,
    ioThreads: 'auto',
    versus: 'chat',
  },
  {
    name: 'stream',
    description: 'streamed chat completion, 20 content chunks',
    shape: { connections: 50, promptBytes: KB, chunks: 20 },
    request: openaiChat,
  },
  {
    name: 'stream-trickle',
    description: 'as stream, the events a millisecond apart, most in a read of their own, as providers send tokens',
    shape: { connections: 50, promptBytes: KB, chunks: 20 },
    request: openaiTrickle,
  },
  {
    name: 'stream-io2',
    description: "as stream, with 2 I/O threads (its proxy and stream's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: 20 },
    request: openaiChat,
    ioThreads: 2,
    versus: 'stream',
  },
  {
    name: 'anthropic-stream',
    description: 'streamed Anthropic message (/v1/messages), 20 content chunks',
    shape: { connections: 50, promptBytes: KB, chunks: 20 },
    request: anthropicStream,
  },
  {
    name: 'claude-code',
    description: "Claude Code's captured request (47 KB: system prompt, 18 tools), streamed, 20 content chunks: a turn whose texts the proxy has seen, as a session's next turns mostly are",
    shape: { connections: 50, promptBytes: KB, chunks: 20 },
    request: claudeCodeTurn,
  },
  {
    name: 'chat-redis',
    description: "as chat, with spend metering in Redis (its proxy and chat's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiChat,
    store: 'redis',
    versus: 'chat',
  },
  {
    name: 'latency',
    description: 'non-streaming chat on one connection: the latency floor',
    shape: { connections: 1, promptBytes: KB, chunks: null },
    request: openaiChat,
  },
  {
    name: 'chat-pass-through',
    description: "as chat, through a pass-through on the proxy's own stack (uWS, undici) with nothing else: what the stack alone costs (its proxy and chat's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiChat,
    through: 'pass-through',
    versus: 'chat',
  },
  {
    name: 'stream-pass-through',
    description: "as stream, through the same pass-through: what the stack alone costs a stream (its proxy and stream's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: 20 },
    request: openaiChat,
    through: 'pass-through',
    versus: 'stream',
  },
  {
    name: 'stream-trickle-pass-through',
    description: "as stream-trickle, through the same pass-through (its proxy and stream-trickle's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: 20 },
    request: openaiTrickle,
    through: 'pass-through',
    versus: 'stream-trickle',
  },
  {
    name: 'latency-pass-through',
    description: "as latency, through the same pass-through: the stack's own latency floor (its proxy and latency's in turn)",
    shape: { connections: 1, promptBytes: KB, chunks: null },
    request: openaiChat,
    through: 'pass-through',
    versus: 'latency',
  },
  {
    name: 'throughput-200',
    description: 'non-streaming chat on 200 connections',
    shape: { connections: 200, promptBytes: KB, chunks: null },
    request: openaiChat,
  },
  {
    name: 'tool-call',
    description: 'non-streaming chat answered with a tool call, no WASM rule installed',
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiToolCall,
  },
  {
    name: 'tool-call-wasm10',
    description: "as tool-call, with 10 WASM rules installed (its proxy and tool-call's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiToolCall,
    wasmRules: 10,
    versus: 'tool-call',
  },
  {
    name: 'tool-call-new',
    description: 'as tool-call, each call a command not seen before (the mock numbers it)',
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiNewToolCall,
  },
  {
    name: 'tool-call-wasm10-new',
    description: "as tool-call-wasm10, each call a command not seen before, so every rule runs (its proxy and tool-call-new's in turn)",
    shape: { connections: 50, promptBytes: KB, chunks: null },
    request: openaiNewToolCall,
    wasmRules: 10,
    versus: 'tool-call-new',
  },
  {
    name: 'dlp-100k',
    description: 'non-streaming chat, 100 KB prompt, DLP on',
    shape: { connections: 10, promptBytes: 100 * KB, chunks: null },
    request: openaiChat,
  },
];

/**
 * The scenario's shape with the command-line overrides applied; `chunks` only changes
 * streaming scenarios.
 * @param {Scenario} scenario
 * @param {ShapeOverrides} overrides
 * @returns {Shape}
 */
export function shapeOf(scenario, overrides) {
  const { shape } = scenario;
  return {
    connections: overrides.connections ?? shape.connections,
    promptBytes: overrides.promptBytes ?? shape.promptBytes,
    chunks: shape.chunks === null ? null : (overrides.chunks ?? shape.chunks),
  };
}

/**
 * The scenario whose proxy `scenario`'s is loaded in turn with, or null. It must send the same
 * request with the same shape, or the two proxies would not be doing the same work.
 * @param {Scenario} scenario
 * @returns {Scenario | null}
 */
export function versusOf(scenario) {
  if (scenario.versus === undefined) return null;
  const other = SCENARIOS.find((s) => s.name === scenario.versus);
  if (other === undefined) throw new Error(`${scenario.name} is compared with ${scenario.versus}, which is no scenario`);
  if (other.request !== scenario.request || JSON.stringify(other.shape) !== JSON.stringify(scenario.shape) || other.versus !== undefined) {
    throw new Error(`${scenario.name} is compared with ${other.name}, which sends another request or is compared in turn itself`);
  }
  return other;
}
