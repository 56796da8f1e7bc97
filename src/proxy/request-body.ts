import { Buffer } from 'node:buffer';
import { InvalidRequestError, isStackOverflow, NestingTooDeepError } from '../lib/errors.js';
import { asBuffer, inSharedMemory } from '../lib/bytes.js';
import type { PolicyEngine } from '../policy/engine.js';
import type { Inspection } from '../policy/inspect.js';
import type { PolicyConfig } from '../policy/policy-config.js';
import { readRequestBodyWith, type RequestBodyResult, type RequestBodyTask } from '../policy/request-task.js';

/** A request body read for the request path: what routing, metering, caching and the rules need of it. */
export interface ReadBody {
  /** Its top-level fields that are not objects or arrays. */
  readonly head: Record<string, unknown>;
  /** The exact cache key, when one was asked for and the body may be cached. */
  readonly cacheKey: string | null;
  readonly inspection: Inspection;
  /** The redacted body when the verdict is `modified`: often a view of the bytes read, written over (spliceStrings). */
  readonly redacted: Buffer | null;
  /** What WASM request rules see (requestText), when asked for. */
  readonly text: string | null;
  /** The whole body as it will be sent, parsed again (a fallback to another model rewrites it). */
  whole(): object;
}

export interface ReadOptions {
  readonly policy: PolicyConfig;
  readonly cacheKeyPrefix: string | null;
  readonly wantsText: boolean;
}

/**
 * Parses and inspects a request body (readRequestBodyWith): on the main thread when it is small (a
 * worker round trip costs more), in a worker otherwise, so that parsing a large body never stalls
 * the event loop. A large body arrives in shared memory (see readBody) and is handed over without
 * a copy. A body nested deeper than inspection can follow (JSON.parse goes deeper than the policy's
 * walk) is the sender's error, not the policy engine's: 400 `nesting_too_deep`. `raw` is given up:
 * what goes on is `redacted` when there is one, never `raw` again.
 */
export async function readRequestBody(engine: PolicyEngine, raw: Buffer, options: ReadOptions): Promise<ReadBody> {
  const task: RequestBodyTask = { policy: options.policy, raw, cacheKeyPrefix: options.cacheKeyPrefix, wantsText: options.wantsText };
  try {
    if (!engine.parsesInWorker(raw.length)) return readBodyFrom(readRequestBodyWith(task, engine.inspectHere), raw);
    // A large body is read into shared memory (see readBody); one that is not (the limits changed since) is copied there.
    return readBodyFrom(await engine.parseRequestBody({ ...task, raw: inSharedMemory(raw) }), raw);
  } catch (err) {
    throw isStackOverflow(err) ? new NestingTooDeepError(err) : err;
  }
}

/**
 * What the request path keeps of a body read: nothing that holds the parse or the redacted text,
 * so a request in flight keeps them out of the young generation's survivors while the upstream
 * answers (bytes live outside the heap).
 */
function readBodyFrom(result: RequestBodyResult, raw: Buffer): ReadBody {
  if (!result.ok) throw result.reason === 'not_json' ? notJson() : notObject();
  const redacted = result.body === null ? null : asBuffer(result.body);
  return { head: result.head, cacheKey: result.cacheKey, inspection: result.inspection, redacted, text: result.text, whole: parsesAgain(redacted ?? raw) };
}

/**
 * The body parsed again when an attempt sends it to a model of another name (a fallback, a
 * provider's prefix taken off): that costs a parse, and keeping the first parse for it would keep it
 * alive, with the request, while the upstream answers.
 */
function parsesAgain(bytes: Buffer): () => object {
  return () => JSON.parse(bytes.toString('utf8')) as object;
}

const notJson = () => new InvalidRequestError('The request body is not valid JSON.');
const notObject = () => new InvalidRequestError('The request body must be a JSON object.');
