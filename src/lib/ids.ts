import { randomFillSync } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const POOL_SIZE = 4096;
const pool = new Uint8Array(POOL_SIZE);
let poolOffset = POOL_SIZE;

function randomBytes10(): Uint8Array {
  if (poolOffset + 10 > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const slice = pool.subarray(poolOffset, poolOffset + 10);
  poolOffset += 10;
  return slice;
}

/**
 * A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32, so ids sort by time.
 * Random bytes come from a pooled buffer: one syscall per ~400 ids keeps this off the profile.
 */
export function ulid(now = Date.now()): string {
  let out = '';
  let time = now;
  const timeChars: string[] = new Array(10);
  for (let i = 9; i >= 0; i--) {
    timeChars[i] = CROCKFORD[time % 32]!;
    time = Math.floor(time / 32);
  }
  out = timeChars.join('');
  const rand = randomBytes10();
  // 80 bits → 16 base32 characters, 5 bits at a time.
  let bits = 0;
  let value = 0;
  for (const byte of rand) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(value >>> bits) & 31];
    }
  }
  return out;
}

export function traceId(now?: number): string {
  return 'tr_' + ulid(now);
}
