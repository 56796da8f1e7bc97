import type { HttpRequest, HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { PayloadTooLargeError } from '../lib/errors.js';

/** What the proxy needs from a request's headers, read synchronously inside the uWS handler. */
export interface IntakeHeaders {
  /** Every header, lower-cased names, in arrival order. */
  readonly all: ReadonlyArray<readonly [string, string]>;
  readonly authorization: string;
  readonly xApiKey: string;
  readonly contentType: string;
  readonly contentLength: number | undefined;
  readonly harness: string | null;
  readonly session: string | null;
  readonly workspace: string | null;
}

export function readHeaders(req: HttpRequest): IntakeHeaders {
  const all: Array<[string, string]> = [];
  req.forEach((k, v) => {
    all.push([k, v]);
  });
  const lengthHeader = req.getHeader('content-length');
  return {
    all,
    authorization: req.getHeader('authorization'),
    xApiKey: req.getHeader('x-api-key'),
    contentType: req.getHeader('content-type'),
    contentLength: lengthHeader === '' ? undefined : Number(lengthHeader),
    harness: req.getHeader('x-svc-harness') || null,
    session: req.getHeader('x-session-id') || null,
    workspace: req.getHeader('x-workspace-id') || null,
  };
}

/** `application/json`, optionally with parameters such as `; charset=utf-8`. */
export function isJsonContentType(contentType: string): boolean {
  const semi = contentType.indexOf(';');
  const media = (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}

/**
 * Reads the whole body into one Buffer, refusing it past `limit`. uWS hands out chunks that are
 * only valid inside the callback, so each is copied. `isGone` lets the reader stop quietly once
 * the request was answered or the client left.
 */
export function readBody(
  res: HttpResponse,
  limit: number,
  isGone: () => boolean,
  onBody: (body: Buffer) => void,
  onError: (err: PayloadTooLargeError) => void,
): void {
  const chunks: Buffer[] = [];
  let total = 0;
  let failed = false;
  res.onData((chunk, isLast) => {
    if (failed || isGone()) return;
    total += chunk.byteLength;
    if (total > limit) {
      failed = true;
      onError(new PayloadTooLargeError(limit));
      return;
    }
    if (isLast && chunks.length === 0) {
      onBody(Buffer.copyBytesFrom(new Uint8Array(chunk)));
      return;
    }
    chunks.push(Buffer.copyBytesFrom(new Uint8Array(chunk)));
    if (isLast) onBody(Buffer.concat(chunks, total));
  });
}
