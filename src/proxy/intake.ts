import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { PayloadTooLargeError } from '../lib/errors.js';
import { IDENTITY_HEADERS, identifyCaller } from './harness.js';

/** What the proxy needs from a request's headers, read synchronously inside the uWS handler. */
export interface IntakeHeaders {
  /** Every header, lower-cased names, in arrival order. */
  readonly all: ReadonlyArray<readonly [string, string]>;
  readonly authorization: string;
  readonly xApiKey: string;
  readonly contentType: string;
  readonly contentLength: number | undefined;
  /**
   * Why the body's framing cannot be trusted (several `content-length` values that disagree, or one
   * that is not a number), else null. RFC 9112 §6.3: such a request is refused and the connection
   * closed, since where its body ends is unknown.
   */
  readonly framingError: string | null;
  /** The agent (`x-svc-harness`, else recognized from its own headers; see harness.ts). */
  readonly harness: string | null;
  /** Its session (`x-session-id`, else the harness's own session header). */
  readonly session: string | null;
  readonly workspace: string | null;
}

export function readHeaders(req: HttpRequest): IntakeHeaders {
  const all: Array<[string, string]> = [];
  let authorization = '';
  let xApiKey = '';
  let contentType = '';
  let contentLength: number | undefined;
  let framingError: string | null = null;
  let workspace: string | null = null;
  const identity = new Map<string, string>();
  // One pass over the headers: each getHeader() would be another call into uWS.
  req.forEach((name, value) => {
    all.push([name, value]);
    if (IDENTITY_HEADERS.has(name)) identity.set(name, value);
    switch (name) {
      case 'authorization':
        authorization = value;
        break;
      case 'x-api-key':
        xApiKey = value;
        break;
      case 'content-type':
        contentType = value;
        break;
      case 'content-length': {
        const length = parseContentLength(value);
        if (length === undefined || (contentLength !== undefined && contentLength !== length)) {
          framingError = 'The request carries an invalid or conflicting content-length.';
        } else contentLength = length;
        break;
      }
      case 'x-workspace-id':
        workspace = value || null;
        break;
    }
  });
  const { harness, session } = identifyCaller(identity);
  return { all, authorization, xApiKey, contentType, contentLength, framingError, harness, session, workspace };
}

const LENGTH_DIGITS = /^\d{1,15}$/;

/** A `content-length` value: digits, or a comma-separated list of one repeated value (RFC 9110 §8.6). */
function parseContentLength(value: string): number | undefined {
  // Every client sends the one value: read without splitting it.
  if (LENGTH_DIGITS.test(value)) return Number(value);
  let length: number | undefined;
  for (const part of value.split(',')) {
    const digits = part.trim();
    if (!LENGTH_DIGITS.test(digits)) return undefined;
    const n = Number(digits);
    if (length !== undefined && n !== length) return undefined;
    length = n;
  }
  return length;
}

/** `application/json`, optionally with parameters such as `; charset=utf-8`. */
export function isJsonContentType(contentType: string): boolean {
  const semi = contentType.indexOf(';');
  const media = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}

/**
 * Reads the whole body into one Buffer, refusing it past `limit`. uWS hands out chunks that are
 * only valid inside the callback, so each is copied. A body larger than `shareAbove` is assembled
 * in shared memory (each chunk copied straight into place when `content-length` announced it), so
 * a worker can parse it without another copy. `isGone` lets the reader stop quietly once the
 * request was answered or the client left.
 */
export function readBody(
  res: HttpResponse,
  limits: { readonly max: number; readonly shareAbove: number; readonly announced: number | undefined },
  isGone: () => boolean,
  onBody: (body: Buffer) => void,
  onError: (err: PayloadTooLargeError) => void,
): void {
  const { max, shareAbove, announced } = limits;
  const shared = announced !== undefined && announced > shareAbove && announced <= max ? Buffer.from(new SharedArrayBuffer(announced)) : null;
  const chunks: Buffer[] = [];
  let total = 0;
  let failed = false;
  res.onData((chunk, isLast) => {
    if (failed || isGone()) return;
    const piece = Buffer.from(chunk);
    if (total + piece.length > max) {
      failed = true;
      onError(new PayloadTooLargeError(max));
      return;
    }
    if (shared !== null && chunks.length === 0) {
      if (total + piece.length <= shared.length) {
        total += piece.copy(shared, total);
        if (isLast) onBody(total === shared.length ? shared : shared.subarray(0, total));
        return;
      }
      // More than announced (uWS frames by content-length, so this is defensive): go on in pieces.
      chunks.push(shared.subarray(0, total));
    }
    total += piece.length;
    chunks.push(Buffer.copyBytesFrom(piece));
    if (isLast) onBody(total > shareAbove ? concatShared(chunks, total) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
  });
}

function concatShared(chunks: readonly Buffer[], total: number): Buffer {
  const body = Buffer.from(new SharedArrayBuffer(total));
  let offset = 0;
  for (const chunk of chunks) offset += chunk.copy(body, offset);
  return body;
}
