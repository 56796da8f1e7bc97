/** Bookkeeping bytes charged per entry on top of its key and value, so many tiny entries are bounded too. */
const ENTRY_OVERHEAD_BYTES = 64;

interface Entry {
  value: Buffer;
  expiresAt: number;
  size: number;
}

/**
 * A byte-bounded LRU of Buffers with a TTL per entry. A Map keeps insertion order, so re-inserting
 * on every hit keeps the least recently used entry first, where eviction takes it.
 */
export class LruCache {
  private readonly entries = new Map<string, Entry>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.used;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string, now: number): Buffer | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= now) {
      this.used -= entry.size;
      return undefined;
    }
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` by reference (no copy); a value larger than the whole cache is not stored. */
  set(key: string, value: Buffer, ttlMs: number, now: number): void {
    this.delete(key);
    const size = key.length * 2 + value.length + ENTRY_OVERHEAD_BYTES;
    if (size > this.maxBytes || ttlMs <= 0) return;
    this.entries.set(key, { value, expiresAt: now + ttlMs, size });
    this.used += size;
    for (const [oldest, entry] of this.entries) {
      if (this.used <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.used -= entry.size;
    }
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.used -= entry.size;
  }
}
