/** A Buffer over the same memory: bytes that crossed a thread arrive as a plain Uint8Array. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** `bytes` over shared memory, so another thread reads them without a copy: as they are when they already are, else copied there. */
export function inSharedMemory(bytes: Uint8Array): Buffer {
  if (bytes.buffer instanceof SharedArrayBuffer) return asBuffer(bytes);
  const copy = Buffer.from(new SharedArrayBuffer(bytes.byteLength));
  copy.set(bytes);
  return copy;
}
