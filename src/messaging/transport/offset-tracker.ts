/**
 * Per-partition commit watermark for out-of-order completion.
 *
 * Messages of a partition are added in fetch order (strictly increasing offsets, possibly
 * with gaps: compaction, transaction markers) and completed in any order. The watermark is
 * the offset to commit: everything below it has completed. It is the offset of the first
 * message not completed yet, or, when all are complete, the last added offset + 1. Offsets
 * are 64-bit, so they are kept as bigint.
 */
interface TrackedOffset {
  readonly offset: bigint;
  done: boolean;
}

export class PartitionOffsetTracker {
  private entries: TrackedOffset[] = [];
  private head = 0;
  private readonly byOffset = new Map<bigint, TrackedOffset>();
  private last: bigint | undefined;
  /** The last watermark committed successfully (bookkeeping for the commit loop). */
  committed: bigint | undefined;

  /** Whether `offset` comes after everything added so far (i.e. it is not a duplicate). */
  isNew(offset: bigint): boolean {
    return this.last === undefined || offset > this.last;
  }

  /** The highest offset added, if any. */
  get lastAdded(): bigint | undefined {
    return this.last;
  }

  /** Messages added and not completed. */
  get pending(): number {
    return this.byOffset.size;
  }

  add(offset: bigint): void {
    if (!this.isNew(offset)) {
      throw new Error(`PartitionOffsetTracker.add: offset ${offset} is not after ${this.last}`);
    }
    const entry: TrackedOffset = { offset, done: false };
    this.entries.push(entry);
    this.byOffset.set(offset, entry);
    this.last = offset;
  }

  /** Marks a message complete; false when it is unknown (never added, or already complete). */
  complete(offset: bigint): boolean {
    const entry = this.byOffset.get(offset);
    if (entry === undefined) return false;
    entry.done = true;
    this.byOffset.delete(offset);
    return true;
  }

  /** The offset to commit, or undefined while nothing was added. */
  watermark(): bigint | undefined {
    while (this.head < this.entries.length && this.entries[this.head]?.done === true) this.head++;
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    const first = this.entries[this.head];
    if (first !== undefined) return first.offset;
    return this.last === undefined ? undefined : this.last + 1n;
  }

  /** The watermark when it moved past the last commit, else undefined. */
  commitCandidate(): bigint | undefined {
    const watermark = this.watermark();
    if (watermark === undefined) return undefined;
    if (this.committed !== undefined && watermark <= this.committed) return undefined;
    return watermark;
  }
}
