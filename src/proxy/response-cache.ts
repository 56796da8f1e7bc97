/**
 * Responses held by the exact cache, as relayed to the client (after response inspection):
 * status, content type, whether it was a stream, usage, and the body bytes. Stored as opaque
 * bytes in the Store: a length-prefixed JSON header, then the body.
 */
export interface CachedResponse {
  readonly status: number;
  readonly contentType: string;
  readonly stream: boolean;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly body: Buffer;
}

/** Responses larger than this are not cached. */
export const MAX_CACHED_BYTES = 2 * 1024 * 1024;

export function encodeCached(response: CachedResponse): Buffer {
  const { body, ...meta } = response;
  const header = Buffer.from(JSON.stringify(meta));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.length);
  return Buffer.concat([length, header, body]);
}

/** The cached response, or undefined for bytes that are not one (a miss). */
export function decodeCached(bytes: Buffer): CachedResponse | undefined {
  try {
    const headerLength = bytes.readUInt32BE(0);
    const meta = JSON.parse(bytes.subarray(4, 4 + headerLength).toString('utf8')) as Omit<CachedResponse, 'body'>;
    if (typeof meta.status !== 'number' || typeof meta.contentType !== 'string' || typeof meta.stream !== 'boolean') return undefined;
    return { ...meta, body: bytes.subarray(4 + headerLength) };
  } catch {
    return undefined;
  }
}
