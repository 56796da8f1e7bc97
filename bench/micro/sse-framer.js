// @ts-check
/**
 * Throughput of the proxy's SSE framing: `SseFramer.push` over ~50 MB of OpenAI chat stream
 * text, cut at random byte offsets the way TCP reads cut it.
 */
import { chatStream } from '../lib/chat-streams.js';
import { seededRandom } from '../lib/random.js';
import { medianSeconds } from './timing.js';

const TARGET_BYTES = 50 * 1024 * 1024;
const MAX_READ_BYTES = 8 * 1024;
const CONTENT_CHUNKS_PER_STREAM = 50;
const SEED = 0x5eed;

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
    for (const event of chatStream(stream, CONTENT_CHUNKS_PER_STREAM)) {
      events.push(event);
      size += event.length;
    }
  }
  return Buffer.from(events.join(''));
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

