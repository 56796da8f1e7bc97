// @ts-check
/** How many trace ids `traceId()` makes per second: one is minted for every proxied request. */
import { medianSeconds } from './timing.js';

const IDS_PER_ROUND = 300_000;

/** @type {import('./index.js').MicroBenchmark} */
export const traceIdBenchmark = {
  name: 'trace-id',
  description: 'traceId() from dist/lib/ids.js: ids per second',
  async run() {
    const { traceId } = await import('../../dist/lib/ids.js');
    let chars = 0; // consumed, so the calls cannot be optimised away
    const seconds = medianSeconds(() => {
      for (let i = 0; i < IDS_PER_ROUND; i++) chars += traceId().length;
    });
    if (chars === 0) throw new Error('traceId() returned empty ids');
    return { 'ids/s': Math.round(IDS_PER_ROUND / seconds), 'ns/id': Math.round((seconds * 1e9) / IDS_PER_ROUND) };
  },
};
