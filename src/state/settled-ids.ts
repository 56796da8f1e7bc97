/**
 * Settled ids in the order they were settled, across workspaces: each is forgotten when its TTL is
 * up, or earlier when the bound needs its place, the oldest first.
 *
 * The order lives in a ring, not in the sets' own insertion order: a JavaScript Map or Set keeps a
 * deleted entry's slot until it next rehashes, so finding the oldest entry by iterating from the
 * front walks every entry deleted before it, thousands of them on each call at a steady rate.
 */
export class SettledIds {
  private readonly ids: Array<string | undefined>;
  /** The set each id was added to: its workspace's. */
  private readonly owners: Array<Set<string> | undefined>;
  private readonly forgetAt: Float64Array;
  private head = 0;
  private count = 0;

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`the bound of settled ids must be a positive integer, got ${capacity}`);
    this.ids = new Array<string | undefined>(capacity).fill(undefined);
    this.owners = new Array<Set<string> | undefined>(capacity).fill(undefined);
    this.forgetAt = new Float64Array(capacity);
  }

  /** Adds `id` to `owner` until `forgetAt`. */
  remember(owner: Set<string>, id: string, forgetAt: number): void {
    if (this.count === this.capacity) this.forgetOldest();
    const at = (this.head + this.count) % this.capacity;
    this.ids[at] = id;
    this.owners[at] = owner;
    this.forgetAt[at] = forgetAt;
    this.count++;
    owner.add(id);
  }

  /** Forgets the ids whose TTL is up at `now`. Every id shares one TTL, so they are the oldest. */
  expire(now: number): void {
    while (this.count > 0 && this.forgetAt[this.head]! <= now) this.forgetOldest();
  }

  clear(): void {
    while (this.count > 0) this.forgetOldest();
  }

  private forgetOldest(): void {
    const at = this.head;
    this.owners[at]!.delete(this.ids[at]!);
    this.ids[at] = undefined;
    this.owners[at] = undefined;
    this.head = (at + 1) % this.capacity;
    this.count--;
  }
}
