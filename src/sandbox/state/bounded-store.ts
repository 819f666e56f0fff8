/**
 * A bounded, pageable store of records (payments, webhook deliveries), so that a sandbox
 * left running for hours (demos, benchmarks, fault campaigns) does not grow with every
 * record it ever made.
 *
 * At most `max` records are kept. Adding one more forgets one: the oldest finished record
 * (a final payment, a delivery that is done) among the next FINISHED_LOOKAHEAD entries
 * from the oldest, or else the oldest of all. A forgotten record is gone as if it never existed (404), and the
 * listeners are told (so that its scheduled jobs go too).
 *
 * Listing is by record number (creation order) from a cursor: a binary search finds where
 * a page starts, and one page looks at no more than PAGE_SCAN_BUDGET records, so a request
 * never walks the whole store. Every operation is O(1) or O(log n) apart from the bounded
 * look-ahead and an occasional compaction of the creation-order index (amortised O(1)).
 */

/** How many entries from the oldest are searched for a finished one before the oldest goes. */
export const FINISHED_LOOKAHEAD = 100;
/** Records one page looks at (matching the filter or not) before it ends early. */
export const PAGE_SCAN_BUDGET = 20_000;

export interface StoredRecord {
  readonly id: string;
  /** Unique and increasing with creation: the listing cursor. */
  readonly number: number;
}

export interface Page<T> {
  readonly items: T[];
  /**
   * Where the next page starts, or null when the listing is done. A page may be short
   * (even empty) while this is not null: it stopped at its scan budget.
   */
  readonly nextCursor: string | null;
}

export class BoundedStore<R extends StoredRecord> {
  private readonly byId = new Map<string, R>();
  /** Kept and forgotten records in creation order from `head`; forgotten ones are skipped. */
  private order: R[] = [];
  private head = 0;
  private readonly forgetListeners: ((record: R) => void)[] = [];

  constructor(
    private readonly max: number,
    private readonly isFinished: (record: R) => boolean,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  get limit(): number {
    return this.max;
  }

  /** Entries of the creation-order index, kept and forgotten (bounded: about twice `size`). */
  get indexEntries(): number {
    return this.order.length;
  }

  get(id: string): R | undefined {
    return this.byId.get(id);
  }

  /** Called with every record forgotten to keep the bound (not on clear()). */
  onForget(listener: (record: R) => void): void {
    this.forgetListeners.push(listener);
  }

  /** Keeps a new record (its number higher than any before), forgetting one if need be. */
  add(record: R): void {
    this.byId.set(record.id, record);
    this.order.push(record);
    while (this.byId.size > this.max) this.forgetOne();
  }

  clear(): void {
    this.byId.clear();
    this.order = [];
    this.head = 0;
  }

  /**
   * Up to `limit` records with a number above `cursor` that pass `filter`, in creation
   * order. An unusable cursor starts from the beginning.
   */
  page(cursor: string | undefined, limit: number, filter?: (record: R) => boolean): Page<R> {
    const after = cursor === undefined ? -Infinity : Number(cursor);
    const items: R[] = [];
    let index = this.firstAfter(Number.isFinite(after) ? after : -Infinity);
    let scanned = 0;
    let last: R | undefined;
    for (; index < this.order.length; index++) {
      if (items.length >= limit || scanned >= PAGE_SCAN_BUDGET) break;
      const record = this.order[index] as R;
      scanned++;
      last = record;
      if (!this.isKept(record)) continue;
      if (filter === undefined || filter(record)) items.push(record);
    }
    const more = index < this.order.length;
    return { items, nextCursor: more && last !== undefined ? String(last.number) : null };
  }

  private isKept(record: R): boolean {
    return record.id !== '' && this.byId.get(record.id) === record;
  }

  /** The index of the first entry with a number above `after` (binary search). */
  private firstAfter(after: number): number {
    let low = this.head;
    let high = this.order.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.order[middle] as R).number <= after) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private forgetOne(): void {
    this.skipForgottenHead();
    let at = this.head;
    const end = Math.min(this.order.length, this.head + FINISHED_LOOKAHEAD);
    for (let index = this.head; index < end; index++) {
      const record = this.order[index] as R;
      if (this.isKept(record) && this.isFinished(record)) {
        at = index;
        break;
      }
    }
    const victim = this.order[at];
    if (victim === undefined) return;
    this.byId.delete(victim.id);
    // Only its number stays in the index (for the binary search), not the record itself.
    this.order[at] = { id: '', number: victim.number } as R;
    this.skipForgottenHead();
    this.compact();
    for (const listener of this.forgetListeners) listener(victim);
  }

  private skipForgottenHead(): void {
    while (this.head < this.order.length && !this.isKept(this.order[this.head] as R)) {
      this.head++;
    }
  }

  /** Drops forgotten entries once they are as many as the kept ones. */
  private compact(): void {
    const entries = this.order.length;
    if (entries < 1024 || entries < 2 * this.byId.size) return;
    this.order = this.order.slice(this.head).filter((record) => this.isKept(record));
    this.head = 0;
  }
}
