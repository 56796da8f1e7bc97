/** Bookkeeping bytes charged per entry on top of its key and value, so many tiny entries are bounded too. */
const ENTRY_OVERHEAD_BYTES = 64;

interface Entry {
  readonly key: string;
  value: Buffer;
  expiresAt: number;
  size: number;
  /** The next less recently used entry, or null for the least recently used. */
  older: Entry | null;
  /** The next more recently used entry, or null for the most recently used. */
  newer: Entry | null;
}

/**
 * A byte-bounded LRU of Buffers with a TTL per entry. Recency is a list through the entries, not the
 * Map's insertion order: a Map keeps a deleted entry's slot until it next rehashes, so taking the
 * oldest by iterating from the front walks every entry deleted before it, tens of thousands on each
 * write to a full cache.
 */
export class LruCache {
  private readonly entries = new Map<string, Entry>();
  private oldest: Entry | null = null;
  private newest: Entry | null = null;
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
    if (entry.expiresAt <= now) {
      this.remove(entry);
      return undefined;
    }
    this.unlink(entry);
    this.append(entry);
    return entry.value;
  }

  /** Keeps `value` by reference (no copy); a value larger than the whole cache is not stored. */
  set(key: string, value: Buffer, ttlMs: number, now: number): void {
    const existing = this.entries.get(key);
    if (existing !== undefined) this.remove(existing);
    const size = key.length * 2 + value.length + ENTRY_OVERHEAD_BYTES;
    if (size > this.maxBytes || ttlMs <= 0) return;
    const entry: Entry = { key, value, expiresAt: now + ttlMs, size, older: null, newer: null };
    this.entries.set(key, entry);
    this.append(entry);
    this.used += size;
    while (this.used > this.maxBytes) this.remove(this.oldest!);
  }

  private remove(entry: Entry): void {
    this.entries.delete(entry.key);
    this.unlink(entry);
    this.used -= entry.size;
  }

  private append(entry: Entry): void {
    entry.older = this.newest;
    entry.newer = null;
    if (this.newest !== null) this.newest.newer = entry;
    else this.oldest = entry;
    this.newest = entry;
  }

  private unlink(entry: Entry): void {
    if (entry.older !== null) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    if (entry.newer !== null) entry.newer.older = entry.older;
    else this.newest = entry.older;
  }
}
