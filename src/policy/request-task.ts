import { asBuffer, inSharedMemory } from '../lib/bytes.js';
import { exactCacheKey, isCacheable } from '../lib/cache-key.js';
import { isJsonObject, scalarFields } from '../lib/json.js';
import { plainReport } from './anomaly/detect.js';
import type { Inspection } from './inspect.js';
import type { PolicyConfig } from './policy-config.js';
import { inspectParsed, type InspectionResult } from './task.js';
import { requestText } from './wasm/call-text.js';

/**
 * A whole request body to parse and inspect: a small one on the main thread, a large one in a
 * worker, so it never blocks the main thread (its bytes arrive in shared memory, no copy, and only
 * what the main thread routes on comes back).
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
      readonly inspection: Inspection;
      /** The redacted body's bytes when the verdict is `modified` (from a worker, over a SharedArrayBuffer). */
      readonly body: Uint8Array | null;
      /** The exact cache key, when one was asked for and a response to this body may be cached (see isCacheable). */
      readonly cacheKey: string | null;
      /** What WASM request rules see (requestText), when asked for. */
      readonly text: string | null;
    }
  | { readonly ok: false; readonly reason: 'not_json' | 'not_object' };

/** The policy's inspection of a parsed body, as the calling thread runs it. */
export type InspectParsed = (policy: PolicyConfig, parsed: unknown, raw: Uint8Array) => InspectionResult;

/**
 * What the request path takes of a request body, the same on the main thread and in a worker: it
 * is parsed, keyed for the cache as sent, inspected (redacted in place), and then read for its
 * top-level scalars and the text the rules see, so neither holds an unredacted text. Nothing
 * returned holds the parse.
 */
export function readRequestBodyWith(task: RequestBodyTask, inspect: InspectParsed): RequestBodyResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(asBuffer(task.raw).toString('utf8'));
  } catch {
    return { ok: false, reason: 'not_json' };
  }
  if (!isJsonObject(parsed)) return { ok: false, reason: 'not_object' };
  const cacheKey = task.cacheKeyPrefix !== null && isCacheable(parsed) ? exactCacheKey(task.cacheKeyPrefix, parsed) : null;
  const { verdict, findings, blockedBy, shadow, anomaly, body } = inspect(task.policy, parsed, task.raw);
  const text = task.wantsText ? requestText(parsed) : null;
  return { ok: true, head: scalarFields(parsed), inspection: { verdict, findings, blockedBy, shadow, anomaly }, body, cacheKey, text };
}

/** In a worker: the result goes back as plain data, the redacted bytes in shared memory (not copied again on the way). */
export function runRequestBodyTask(task: RequestBodyTask): RequestBodyResult {
  const result = readRequestBodyWith(task, inspectParsed);
  if (!result.ok) return result;
  const { head, inspection, body, cacheKey, text } = result;
  return { ok: true, head, inspection: { ...inspection, anomaly: plainReport(inspection.anomaly) }, body: body === null ? null : inSharedMemory(body), cacheKey, text };
}
