// A first-in, first-out queue with a bound: pushing onto a full one refuses instead of growing.

export class BoundedQueue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  constructor(readonly limit: number) {}

  get size(): number {
    return this.items.length - this.head;
  }

  /** False when full: the item was not taken. */
  push(item: T): boolean {
    if (this.size >= this.limit) return false;
    this.items.push(item);
    return true;
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Taken items are let go in blocks, so a long queue never shifts element by element.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Empties the queue; returns how many items it held. */
  drain(): number {
    const n = this.size;
    this.items = [];
    this.head = 0;
    return n;
  }
}
