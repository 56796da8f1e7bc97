// @ts-check
/**
 * Closed-loop HTTP load: `connections` keep-alive undici Clients, each sending its next request
 * as soon as the previous one completes. Requests that complete during the warm-up are not
 * counted; those that complete inside the measured window are. Latency (request sent to last
 * body byte) and time to first byte (first body chunk) go into HDR histograms in microseconds.
 *
 * It runs in its own process so that its CPU never counts as the server's: `runLoad` forks
 * this file and the two talk over IPC.
 */
import { fork } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'hdr-histogram-js';
import { Client } from 'undici';
import { track } from './children.js';

/** How long requests still in flight at the end of the window may take before they are cut. */
const DRAIN_MS = 10_000;
/** Allowance for forking the generator and opening its connections. */
const STARTUP_MS = 10_000;
const MAX_ERROR_SAMPLES = 5;
const ERROR_SAMPLE_CHARS = 200;
const HISTOGRAM_OPTIONS = { lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: /** @type {const} */ (3) };
const CLIENT_OPTIONS = {
  pipelining: 1,
  keepAliveTimeout: 60_000,
  headersTimeout: 15_000,
  bodyTimeout: 15_000,
  connect: { timeout: 5_000 },
};

/**
 * @typedef {object} LoadRequest
 * @property {string} path
 * @property {Record<string, string>} headers
 * @property {string} body
 * @property {string} expectEnd  a 2xx response whose body does not end with this counts as truncated
 */

/**
 * @typedef {object} LoadConfig
 * @property {string} url  the server's origin
 * @property {LoadRequest} request
 * @property {number} connections
 * @property {number} warmupMs
 * @property {number} durationMs
 */

/** @typedef {{ p50: number, p90: number, p99: number }} Percentiles  milliseconds */

/**
 * @typedef {object} LoadResult
 * @property {number} requests  complete 2xx responses in the window
 * @property {number} seconds  length of the window
 * @property {number} requestsPerSec
 * @property {Percentiles} latencyMs
 * @property {Percentiles} ttfbMs
 * @property {{ non2xx: number, failed: number, truncated: number }} errors
 * @property {string[]} errorSamples  the first few distinct error descriptions
 */

/** @typedef {{ onWindowStart(): void, onWindowEnd(): void }} WindowHooks */

/**
 * @typedef {object} Outcome
 * @property {number} start  performance.now() when the request was dispatched
 * @property {number} firstByte  …when the first body chunk arrived (0 if none)
 * @property {number} end  …when the response completed or failed
 * @property {number} status  0 when no response came
 * @property {string | null} error  transport error, if any
 * @property {Buffer | null} firstChunk
 * @property {Buffer} tail  the last bytes of the body, as many as `expectEnd` has
 */

/**
 * Generates load in this process.
 * @param {LoadConfig} config
 * @param {WindowHooks} hooks  called as the measured window opens and closes
 * @returns {Promise<LoadResult>}
 */
async function generateLoad(config, hooks) {
  const stats = new WindowStats(Buffer.from(config.request.expectEnd));
  /** @type {import('undici').Dispatcher.DispatchOptions} */
  const options = { path: config.request.path, method: 'POST', headers: config.request.headers, body: Buffer.from(config.request.body) };
  const clients = Array.from({ length: config.connections }, () => new Client(config.url, CLIENT_OPTIONS));
  let phase = /** @type {'warmup' | 'measuring' | 'stopping'} */ ('warmup');

  const loops = clients.map(async (client) => {
    while (phase !== 'stopping') {
      const outcome = await exchange(client, options, stats.expectEnd.length);
      if (phase === 'measuring') stats.record(outcome);
    }
  });

  await sleep(config.warmupMs);
  phase = 'measuring';
  hooks.onWindowStart();
  const windowStart = performance.now();
  await sleep(config.durationMs);
  phase = 'stopping';
  const seconds = (performance.now() - windowStart) / 1000;
  hooks.onWindowEnd();

  await Promise.race([Promise.all(loops), sleep(DRAIN_MS)]);
  await Promise.all(clients.map((client) => client.destroy()));
  return stats.summary(seconds);
}

/** Counts and histograms of the requests completed inside the measured window. */
class WindowStats {
  /** @param {Buffer} expectEnd */
  constructor(expectEnd) {
    this.expectEnd = expectEnd;
    this.latency = build(HISTOGRAM_OPTIONS);
    this.ttfb = build(HISTOGRAM_OPTIONS);
    this.errors = { non2xx: 0, failed: 0, truncated: 0 };
    /** @type {Set<string>} */
    this.errorSamples = new Set();
  }

  /** @param {Outcome} outcome */
  record(outcome) {
    if (outcome.error !== null) {
      this.errors.failed += 1;
      this.sample(outcome.error);
    } else if (outcome.status < 200 || outcome.status > 299) {
      this.errors.non2xx += 1;
      this.sample(`HTTP ${outcome.status}: ${String(outcome.firstChunk ?? '').slice(0, ERROR_SAMPLE_CHARS)}`);
    } else if (!outcome.tail.equals(this.expectEnd)) {
      this.errors.truncated += 1;
      this.sample(`body did not end with ${JSON.stringify(this.expectEnd.toString())}: …${JSON.stringify(outcome.tail.toString())}`);
    } else {
      this.latency.recordValue(microseconds(outcome.end - outcome.start));
      this.ttfb.recordValue(microseconds(outcome.firstByte - outcome.start));
    }
  }

  /** @param {string} description */
  sample(description) {
    if (this.errorSamples.size < MAX_ERROR_SAMPLES) this.errorSamples.add(description);
  }

  /**
   * @param {number} seconds
   * @returns {LoadResult}
   */
  summary(seconds) {
    const requests = this.latency.totalCount;
    return {
      requests,
      seconds,
      requestsPerSec: requests / seconds,
      latencyMs: percentiles(this.latency),
      ttfbMs: percentiles(this.ttfb),
      errors: this.errors,
      errorSamples: [...this.errorSamples],
    };
  }
}

/** @param {number} ms */
function microseconds(ms) {
  return Math.max(1, Math.round(ms * 1000));
}

/**
 * @param {import('hdr-histogram-js').Histogram} histogram  in microseconds
 * @returns {Percentiles}
 */
function percentiles(histogram) {
  /** @param {number} p */
  const at = (p) => histogram.getValueAtPercentile(p) / 1000;
  return { p50: at(50), p90: at(90), p99: at(99) };
}

/**
 * One request on one connection; never rejects.
 * @param {Client} client
 * @param {import('undici').Dispatcher.DispatchOptions} options
 * @param {number} tailBytes
 * @returns {Promise<Outcome>}
 */
function exchange(client, options, tailBytes) {
  return new Promise((resolve) => {
    /** @type {Outcome} */
    const outcome = { start: performance.now(), firstByte: 0, end: 0, status: 0, error: null, firstChunk: null, tail: Buffer.alloc(0) };
    client.dispatch(options, {
      onRequestStart() {}, // its presence selects undici's controller-style handler API
      onResponseStart(_controller, statusCode) {
        outcome.status = statusCode;
      },
      onResponseData(_controller, chunk) {
        if (outcome.firstChunk === null) {
          outcome.firstByte = performance.now();
          outcome.firstChunk = chunk;
        }
        outcome.tail = chunk.length >= tailBytes ? chunk.subarray(chunk.length - tailBytes) : Buffer.concat([outcome.tail, chunk]).subarray(-tailBytes);
      },
      onResponseEnd() {
        outcome.end = performance.now();
        resolve(outcome);
      },
      onResponseError(_controller, error) {
        outcome.end = performance.now();
        outcome.error = error.message;
        resolve(outcome);
      },
    });
  });
}

// ---------------------------------------------------------------------------------------
// Running in a child process

/**
 * @typedef {{ type: 'window-start' } | { type: 'window-end' } | { type: 'result', result: LoadResult }} GeneratorMessage
 */

/**
 * Generates load from a child process; `hooks` run in this process as the child's window
 * opens and closes.
 * @param {LoadConfig} config
 * @param {WindowHooks} hooks
 * @returns {Promise<LoadResult>}
 */
export function runLoad(config, hooks) {
  return new Promise((resolve, reject) => {
    const child = track(fork(fileURLToPath(import.meta.url), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    const limitMs = STARTUP_MS + config.warmupMs + config.durationMs + DRAIN_MS;
    /** @param {Error} err */
    const fail = (err) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err); // a no-op once resolved
    };
    const timer = setTimeout(() => fail(new Error(`the load generator did not finish within ${limitMs} ms`)), limitMs);
    child.on('message', (/** @type {GeneratorMessage} */ message) => {
      try {
        if (message.type === 'window-start') hooks.onWindowStart();
        else if (message.type === 'window-end') hooks.onWindowEnd();
        else {
          clearTimeout(timer);
          resolve(message.result);
        }
      } catch (err) {
        fail(/** @type {Error} */ (err));
      }
    });
    child.once('exit', (code) => fail(new Error(`the load generator exited with code ${code} before reporting`)));
    child.send(config);
  });
}

/** The child's side: one config in, window events and one result out, then exit. */
function serveParent() {
  /** @param {GeneratorMessage} message */
  const send = (message) => process.send?.(message);
  process.once('disconnect', () => process.exit());
  process.once('message', async (/** @type {LoadConfig} */ config) => {
    const result = await generateLoad(config, {
      onWindowStart: () => send({ type: 'window-start' }),
      onWindowEnd: () => send({ type: 'window-end' }),
    });
    process.send?.({ type: 'result', result }, () => process.disconnect());
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.send !== undefined) serveParent();
