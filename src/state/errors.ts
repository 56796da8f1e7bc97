import { SvcError } from '../lib/errors.js';
import type { Refused } from './store.js';

/** 429 `OVERAGE_HARD_CAP_EXCEEDED`: the proxy's refusal for a reserve the hard cap refused. */
export class HardCapExceededError extends SvcError {
  constructor(refusal: Pick<Refused, 'cap' | 'retryAfterSeconds'>) {
    const until = refusal.cap === 'daily' ? 'midnight UTC' : 'the start of next month (UTC)';
    super(`The workspace's ${refusal.cap} spend cap is reached and its hard cap is on; requests are refused until ${until}.`, {
      code: 'OVERAGE_HARD_CAP_EXCEEDED',
      status: 429,
      type: 'insufficient_quota',
      headers: { 'retry-after': String(refusal.retryAfterSeconds) },
    });
  }
}
