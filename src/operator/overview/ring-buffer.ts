/**
 * A fixed number of the latest samples, oldest first: the overview keeps six hours of
 * one-a-minute samples of the live gauges (consumer lag, outbox backlog, calls in doubt,
 * webhooks refused) in memory, and forgets the oldest as new ones come.
 */
export class RingBuffer<T> {
  private readonly slots: (T | undefined)[];
  private next = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`a ring buffer holds at least one sample (got ${capacity})`);
    }
    this.slots = new Array<T | undefined>(capacity);
  }

  /** Adds a sample; when full, the oldest is dropped. */
  push(sample: T): void {
    this.slots[this.next] = sample;
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.capacity, this.size + 1);
  }

  get length(): number {
    return this.size;
  }

  /** The samples held, oldest first. */
  toArray(): T[] {
    const start = (this.next - this.size + this.capacity) % this.capacity;
    const out: T[] = [];
    for (let k = 0; k < this.size; k += 1) {
      const sample = this.slots[(start + k) % this.capacity];
      if (sample !== undefined) out.push(sample);
    }
    return out;
  }

  /** The newest sample, if any. */
  last(): T | undefined {
    return this.size === 0
      ? undefined
      : this.slots[(this.next - 1 + this.capacity) % this.capacity];
  }
}
