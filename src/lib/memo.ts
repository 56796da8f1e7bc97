/**
 * Keys up to this long are looked up by themselves. A longer one is looked up by its sketch and
 * then compared whole: V8 hashes a string key one character at a time (about 1.5 ns each, under
 * 16,384 characters), where comparing two strings runs at memory speed. A Claude Code turn's 43,000
 * characters of text cost 64 µs to hash for the DLP memo alone.
 */
const HASHED_KEY_CHARS = 64;
/** How many remembered keys may share a sketch: what a lookup compares at most. */
const MAX_SHARING_SKETCH = 8;
/** Characters read at each end of a long key and spread over the rest, for its sketch. */
const EDGE_SAMPLES = 16;
const SPREAD_SAMPLES = 32;

interface Remembered<T> {
  readonly key: string;
  readonly result: T;
  /** The key remembered before this one with the same sketch. */
  readonly next: Remembered<T> | undefined;
  /** How many keys share this sketch, this one included. */
  readonly depth: number;
}

/**
 * `fn` with its results remembered for up to `limit` keys, or keys of `maxTotalChars` characters
 * in all (then forgotten all at once). A key longer than `maxKeyChars` is not remembered (it would
 * be kept alive with its result). Each caller owns its cache, so one is never shared between
 * threads.
 */
export function memoize<T>(fn: (key: string) => T, limit: number, maxKeyChars = Infinity, maxTotalChars = Infinity): (key: string) => T {
  const short = new Map<string, T>();
  const long = new Map<number, Remembered<T>>();
  let count = 0;
  let totalChars = 0;
  const remembering = (chars: number): void => {
    if (count >= limit || totalChars + chars > maxTotalChars) {
      short.clear();
      long.clear();
      count = 0;
      totalChars = 0;
    }
    count++;
    totalChars += chars;
  };
  return (key) => {
    if (key.length > maxKeyChars) return fn(key);
    if (key.length <= HASHED_KEY_CHARS) {
      const known = short.get(key);
      if (known !== undefined || short.has(key)) return known as T;
      const result = fn(key);
      remembering(key.length);
      short.set(key, result);
      return result;
    }
    const sketch = sketchOf(key);
    for (let r = long.get(sketch); r !== undefined; r = r.next) if (r.key === key) return r.result;
    const result = fn(key);
    // A key whose sketch is shared by too many is worked out each time: lookups stay bounded.
    const sharing = long.get(sketch);
    if (sharing !== undefined && sharing.depth >= MAX_SHARING_SKETCH) return result;
    remembering(key.length);
    const next = long.get(sketch);
    long.set(sketch, { key, result, next, depth: (next?.depth ?? 0) + 1 });
    return result;
  };
}

/**
 * A number standing for a long text: its length, the characters at its ends (where counters and
 * timestamps usually sit) and some spread between them. Texts that share one are told apart by
 * comparing them whole.
 */
function sketchOf(text: string): number {
  const n = text.length;
  let h = n;
  for (let i = 0; i < EDGE_SAMPLES; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ text.charCodeAt(n - 1 - i), 0x01000193);
  }
  const step = (n - 2 * EDGE_SAMPLES) / SPREAD_SAMPLES;
  for (let i = 0; i < SPREAD_SAMPLES; i++) h = Math.imul(h ^ text.charCodeAt(EDGE_SAMPLES + Math.floor(i * step)), 0x01000193);
  return h;
}
