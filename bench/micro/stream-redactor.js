// @ts-check
/**
 * Cost of redacting a live stream: `StreamRedactor.push` over OpenAI chat streams, one event per
 * read, with all five DLP detectors redacting (the policy every bench scenario runs). The answers
 * mix prose with the digits and addresses that make the redactor hold text back.
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
  description: 'StreamRedactor.push from dist/policy/stream.js over chat streams, one event per read, all five detectors redacting: µs per event',
  async run() {
    const { StreamRedactor } = await import('../../dist/policy/stream.js');
    const { buildPolicyConfig } = await import('../../dist/policy/policy-config.js');
    const policy = buildPolicyConfig({ version: 'bench', settings: { piiDetectors: PII_REDACTING }, localPii: undefined, env: {} });
    const streams = Array.from({ length: STREAMS }, (_, n) => chatStream(n, CONTENT_CHUNKS_PER_STREAM, WORDS).map((event) => Buffer.from(event)));
    const events = streams.reduce((sum, stream) => sum + stream.length, 0);
    let findings = 0;
    const seconds = medianSeconds(() => {
      findings = 0;
      for (const stream of streams) {
        const redactor = new StreamRedactor(policy);
        for (const event of stream) redactor.push(event);
        redactor.finish();
        findings += redactor.findings.length;
      }
    });
    if (findings === 0) throw new Error('the streams hold an address, but the redactor found none');
    return {
      'µs/event': Math.round((seconds / events) * 1e6 * 100) / 100,
      'µs/stream': Math.round((seconds / STREAMS) * 1e6),
      events,
      findings,
    };
  },
};
