// @ts-check
/**
 * Throughput of the proxy's SSE framing: `SseFramer.push` over ~50 MB of OpenAI chat stream
 * text, cut at random byte offsets the way TCP reads cut it.
 */
import { seededRandom } from '../lib/random.js';
import { medianSeconds } from './timing.js';

const TARGET_BYTES = 50 * 1024 * 1024;
const MAX_READ_BYTES = 8 * 1024;
const CONTENT_CHUNKS_PER_STREAM = 50;
const SEED = 0x5eed;
const WORDS = ['Sure', ',', ' here', ' is', ' the', ' refactored', ' function', ':\n\n```ts\n', 'export', ' const', ' cache', ' =', ' new', ' Map', '();\n```', '.'];

/** @type {import('./index.js').MicroBenchmark} */
export const sseFramerBenchmark = {
  name: 'sse-framer',
  description: 'SseFramer.push from dist/lib/sse.js over ~50 MB of chat stream text in random-sized reads: MB/s',
  async run() {
    const { SseFramer } = await import('../../dist/lib/sse.js');
    const text = chatStreams(TARGET_BYTES);
    const reads = cutAtRandomOffsets(text, MAX_READ_BYTES, SEED);
    const seconds = medianSeconds(() => {
      const framed = frameAll(new SseFramer(), reads);
      if (framed !== text.length) throw new Error(`SseFramer passed on ${framed} of ${text.length} bytes`);
    });
    return {
      'MB/s': Math.round(text.length / 1e6 / seconds),
      MB: Math.round(text.length / 1e6),
      reads: reads.length,
    };
  },
};

/**
 * Pushes every read through the framer, then flushes it.
 * @param {import('../../dist/lib/sse.js').SseFramer} framer
 * @param {Buffer[]} reads
 * @returns {number} bytes passed on
 */
function frameAll(framer, reads) {
  let bytes = 0;
  for (const read of reads) bytes += framer.push(read)?.length ?? 0;
  return bytes + (framer.flush()?.length ?? 0);
}

/**
 * Complete chat completion streams, as OpenAI sends them, until about `bytes` bytes.
 * @param {number} bytes
 */
function chatStreams(bytes) {
  /** @type {string[]} */
  const events = [];
  let size = 0;
  for (let stream = 0; size < bytes; stream++) {
    for (const event of chatStream(stream)) {
      events.push(event);
      size += event.length;
    }
  }
  return Buffer.from(events.join(''));
}

/** @param {number} n */
function* chatStream(n) {
  const head = {
    id: `chatcmpl-B9MHDbslfkBeAs8l4bebGdF${String(n).padStart(6, '0')}`,
    object: 'chat.completion.chunk',
    created: 1741570283,
    model: 'gpt-4o-mini-2024-07-18',
    service_tier: 'default',
    system_fingerprint: 'fp_06737a9306',
  };
  /**
   * @param {object} delta
   * @param {string | null} finishReason
   */
  const chunk = (delta, finishReason) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] })}\n\n`;
  yield chunk({ role: 'assistant', content: '', refusal: null }, null);
  for (let i = 0; i < CONTENT_CHUNKS_PER_STREAM; i++) yield chunk({ content: WORDS[i % WORDS.length] }, null);
  yield chunk({}, 'stop');
  yield `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 250, completion_tokens: CONTENT_CHUNKS_PER_STREAM, total_tokens: 300 } })}\n\n`;
  yield 'data: [DONE]\n\n';
}

/**
 * `buf` cut into views of 1..maxBytes bytes at offsets from a seeded generator, so every run
 * frames the same reads.
 * @param {Buffer} buf
 * @param {number} maxBytes
 * @param {number} seed
 */
function cutAtRandomOffsets(buf, maxBytes, seed) {
  const random = seededRandom(seed);
  /** @type {Buffer[]} */
  const reads = [];
  for (let offset = 0; offset < buf.length; ) {
    const end = Math.min(buf.length, offset + 1 + Math.floor(random() * maxBytes));
    reads.push(buf.subarray(offset, end));
    offset = end;
  }
  return reads;
}

