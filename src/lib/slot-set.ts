/** An object a SlotSet holds: the set writes its place here. */
export interface Slotted {
  slot: number;
}

/**
 * A set of the objects in flight, kept as slots of an array: adding and removing never rehash.
 * A Set under constant add and delete makes a new table every few hundred operations, and V8 keeps
 * the old one, and whatever it held then, until a full collection: each time, every request in
 * flight was kept alive into the old generation (bench/README.md, "Garbage collection").
 */
export class SlotSet<T extends Slotted> implements Iterable<T> {
  private readonly slots: Array<T | undefined> = [];
  private readonly free: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(item: T): void {
    if (this.has(item)) return;
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = item;
    item.slot = slot;
    this.count++;
  }

  delete(item: T): boolean {
    if (!this.has(item)) return false;
    this.slots[item.slot] = undefined;
    this.free.push(item.slot);
    item.slot = -1;
    this.count--;
    return true;
  }

  has(item: T): boolean {
    return item.slot >= 0 && this.slots[item.slot] === item;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (const item of this.slots) if (item !== undefined) yield item;
  }
}
