import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const POOL_SIZE = 4096;
const pool = new Uint8Array(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** The offset of 10 fresh random bytes in `pool`. */
function random10(): number {
  if (poolOffset + 10 > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  return poolOffset - 10;
}

const CROCKFORD_CODES = Uint8Array.from(CROCKFORD, (c) => c.charCodeAt(0));
const ULID_CHARS = 26;
const TRACE_PREFIX = 'tr_';
/**
 * Ids are written here as bytes and read out as one flat string. Built a character at a time
 * with `+=`, an id is a chain of ~17 string pieces: 5× the memory for as long as it is kept (a
 * budget ledger keeps every request's) and 17 allocations for the collector.
 */
const scratch = Buffer.alloc(TRACE_PREFIX.length + ULID_CHARS);
scratch.write(TRACE_PREFIX, 'latin1');

/** Writes a ULID at `scratch[at..at + 26)`. */
function writeUlid(at: number, now: number): void {
  let time = now;
  for (let i = at + 9; i >= at; i--) {
    scratch[i] = CROCKFORD_CODES[time % 32]!;
    time = Math.floor(time / 32);
  }
  const rand = random10();
  // 80 bits → 16 base32 characters, 5 bits at a time.
  let bits = 0;
  let value = 0;
  let out = at + 10;
  for (let r = rand; r < rand + 10; r++) {
    value = (value << 8) | pool[r]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      scratch[out++] = CROCKFORD_CODES[(value >>> bits) & 31]!;
    }
  }
}

/**
 * A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32, so ids sort by time.
 * Random bytes come from a pooled buffer: one syscall per ~400 ids keeps this off the profile.
 */
export function ulid(now = Date.now()): string {
  writeUlid(TRACE_PREFIX.length, now);
  return scratch.toString('latin1', TRACE_PREFIX.length);
}

export function traceId(now = Date.now()): string {
  writeUlid(TRACE_PREFIX.length, now);
  return scratch.toString('latin1');
}
