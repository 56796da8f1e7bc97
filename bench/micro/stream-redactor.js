// @ts-check
/**
 * Cost of redacting a live stream: `StreamRedactor.push` over OpenAI chat streams, one event per
 * read, with all five DLP detectors redacting (the policy every bench scenario runs). The answers
 * mix prose with the digits and addresses that make the redactor hold text back. The same streams
 * are also pushed whole, in one read each, as a provider's burst (or the bench's mock) arrives.
 */
import { chatStream, PROSE_WORDS } from '../lib/chat-streams.js';
import { PII_REDACTING } from '../lib/policy.js';
import { medianSeconds } from './timing.js';

const STREAMS = 400;
const CONTENT_CHUNKS_PER_STREAM = 50;
const WORDS = [...PROSE_WORDS, ' on', ' line', ' 42', ' of', ' v', '4', '.12', ';', ' ask', ' ops', '@', 'example', '.com', '.\n'];

/** @type {import('./index.js').MicroBenchmark} */
export const streamRedactorBenchmark = {
  name: 'stream-redactor',
  description: 'StreamRedactor.push from dist/policy/stream.js over chat streams, one event per read and whole in one read, all five detectors redacting: µs per event',
  async run() {
    const { StreamRedactor } = await import('../../dist/policy/stream.js');
    const { buildPolicyConfig } = await import('../../dist/policy/policy-config.js');
    const policy = buildPolicyConfig({ version: 'bench', settings: { piiDetectors: PII_REDACTING }, localPii: undefined, env: {} });
    const streams = Array.from({ length: STREAMS }, (_, n) => chatStream(n, CONTENT_CHUNKS_PER_STREAM, WORDS).map((event) => Buffer.from(event)));
    const bursts = streams.map((stream) => [Buffer.concat(stream)]);
    const events = streams.reduce((sum, stream) => sum + stream.length, 0);
    /** @param {Buffer[][]} reads */
    const redactAll = (reads) => {
      let findings = 0;
      const seconds = medianSeconds(() => {
        findings = 0;
        for (const stream of reads) {
          const redactor = new StreamRedactor(policy);
          for (const read of stream) redactor.push(read);
          redactor.finish();
          findings += redactor.findings.length;
        }
      });
      if (findings === 0) throw new Error('the streams hold an address, but the redactor found none');
      return { seconds, findings };
    };
    const perEvent = redactAll(streams);
    const whole = redactAll(bursts);
    return {
      'µs/event': Math.round((perEvent.seconds / events) * 1e6 * 100) / 100,
      'µs/stream': Math.round((perEvent.seconds / STREAMS) * 1e6),
      'µs/stream in one read': Math.round((whole.seconds / STREAMS) * 1e6),
      events,
      findings: perEvent.findings,
    };
  },
};
