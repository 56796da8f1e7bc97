/** A Buffer over the same memory: bytes that crossed a thread arrive as a plain Uint8Array. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
