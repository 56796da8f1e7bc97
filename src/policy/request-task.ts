import { asBuffer } from '../lib/bytes.js';
import { exactCacheKey, isCacheable } from '../lib/cache-key.js';
import { isJsonObject, scalarFields } from '../lib/json.js';
import type { StringEdit } from '../lib/json-splice.js';
import { plainReport } from './anomaly/detect.js';
import { inspectBody, type Inspection } from './inspect.js';
import type { PolicyConfig } from './policy-config.js';
import { redactedBytes } from './task.js';
import { requestText } from './wasm/call-text.js';

/**
 * A whole request body for a worker to parse and inspect, so a large one never blocks the main
 * thread: the bytes arrive in shared memory (no copy), and only what the main thread routes on
 * comes back.
 */
export interface RequestBodyTask {
  readonly policy: PolicyConfig;
  /** The body's bytes, over a SharedArrayBuffer. */
  readonly raw: Uint8Array;
  /** The exact cache key's prefix when the response cache is on, else null. */
  readonly cacheKeyPrefix: string | null;
  /** Whether the text WASM request rules see is wanted. */
  readonly wantsText: boolean;
}

export type RequestBodyResult =
  | {
      readonly ok: true;
      /** The body's top-level fields that are not objects or arrays (model, stream, token limits, …). */
      readonly head: Record<string, unknown>;
      /** Whether a response to this body may be cached (see isCacheable). */
          readonly inspection: Inspection;
      /** The redacted body's bytes (over a SharedArrayBuffer) when the verdict is `modified`. */
      readonly body: Uint8Array | null;
      readonly cacheKey: string | null;
      readonly text: string | null;
    }
  | { readonly ok: false; readonly reason: 'not_json' | 'not_object' };

export function runRequestBodyTask(task: RequestBodyTask): RequestBodyResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(asBuffer(task.raw).toString('utf8'));
  } catch {
    return { ok: false, reason: 'not_json' };
  }
  if (!isJsonObject(parsed)) return { ok: false, reason: 'not_object' };
  const head = scalarFields(parsed);
  // Keyed on the body as sent: inspection redacts it in place.
  const cacheKey = task.cacheKeyPrefix !== null && isCacheable(parsed) ? exactCacheKey(task.cacheKeyPrefix, parsed) : null;
  const edits: StringEdit[] = [];
  const { verdict, findings, blockedBy, shadow, anomaly } = inspectBody(task.policy, parsed, edits);
  const inspection: Inspection = { verdict, findings, blockedBy, shadow, anomaly: plainReport(anomaly) };
  // Rules see the body as it will be sent on, as they do when it is inspected on the main thread.
  const text = task.wantsText ? requestText(parsed) : null;
  return { ok: true, head, inspection, body: inspection.verdict === 'modified' ? shared(redactedBytes(task.raw, parsed, edits)) : null, cacheKey, text };
}

/** `bytes` copied into shared memory, handed back to the main thread without another copy. */
function shared(bytes: Uint8Array): Uint8Array {
  const copy = new Uint8Array(new SharedArrayBuffer(bytes.byteLength));
  copy.set(bytes);
  return copy;
}
