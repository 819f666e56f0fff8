/**
 * The money movements the sandbox booked (the settlement CSV's rows), by organization and
 * booked date (UTC), so that a settlement CSV for a few dates reads only those dates, never
 * every movement ever booked.
 *
 * At most `maxMovements` are kept: past that, whole booked dates are forgotten, the oldest
 * date first (of any organization); a single date larger than the bound loses its oldest
 * rows (down to 99 % of the bound). Within a date, movements are kept in booking order (stable for equal times); a
 * date booked out of order is sorted once, when it is next read.
 */
import { utcDateOf } from './clock.js';

/**
 * Default SANDBOX_MAX_MOVEMENTS: the settlement bench's nights (10,000 + 100,000 + 300,000
 * rows) in one sandbox, with room to spare.
 */
export const DEFAULT_MAX_MOVEMENTS = 500_000;

/** A money movement booked by the sandbox: one settlement CSV row. */
export interface Movement {
  id: string;
  organizationId: string;
  paymentId: string;
  paymentNumber: number;
  installmentId: string | null;
  internalRef: string | null;
  orderNumber: string;
  type: 'payment' | 'refund';
  currency: string;
  grossMinor: number;
  /** What the acquirer keeps (settlement/fees.ts), decided when the line is booked. */
  feeMinor: number;
  bookedAt: number;
}

/** The movements of one booked date (UTC), in booking order. */
export interface BookedDate {
  readonly date: string;
  readonly movements: readonly Movement[];
}

interface DateBucket {
  readonly organizationId: string;
  readonly date: string;
  movements: Movement[];
  sorted: boolean;
}

export class MovementLedger {
  private readonly byOrganization = new Map<string, Map<string, DateBucket>>();
  private total = 0;

  constructor(private readonly maxMovements: number = DEFAULT_MAX_MOVEMENTS) {}

  get size(): number {
    return this.total;
  }

  get limit(): number {
    return this.maxMovements;
  }

  add(movement: Movement): void {
    let dates = this.byOrganization.get(movement.organizationId);
    if (!dates) {
      dates = new Map();
      this.byOrganization.set(movement.organizationId, dates);
    }
    const date = utcDateOf(movement.bookedAt);
    let bucket = dates.get(date);
    if (!bucket) {
      bucket = { organizationId: movement.organizationId, date, movements: [], sorted: true };
      dates.set(date, bucket);
    }
    const last = bucket.movements[bucket.movements.length - 1];
    if (last && last.bookedAt > movement.bookedAt) bucket.sorted = false;
    bucket.movements.push(movement);
    this.total++;
    if (this.total > this.maxMovements) this.trim();
  }

  /**
   * The organization's movements booked on the dates [from, to] (YYYY-MM-DD), date by date,
   * each ordered by booking time; a copy of each date's list (no object per row), so that
   * later bookings do not change it.
   */
  select(organizationId: string, from: string, to: string): BookedDate[] {
    const dates = this.byOrganization.get(organizationId);
    if (!dates) return [];
    const buckets = [...dates.values()]
      .filter((bucket) => bucket.date >= from && bucket.date <= to)
      .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    return buckets.map((bucket) => {
      if (!bucket.sorted) {
        // Array.prototype.sort is stable: movements booked at the same time keep their order.
        bucket.movements.sort((a, b) => a.bookedAt - b.bookedAt);
        bucket.sorted = true;
      }
      return { date: bucket.date, movements: bucket.movements.slice() };
    });
  }

  clear(): void {
    this.byOrganization.clear();
    this.total = 0;
  }

  /** Forgets the oldest dates (or, for the last one left, its oldest rows) to keep the bound. */
  private trim(): void {
    while (this.total > this.maxMovements) {
      let oldest: DateBucket | undefined;
      let buckets = 0;
      for (const dates of this.byOrganization.values()) {
        for (const bucket of dates.values()) {
          buckets++;
          if (!oldest || bucket.date < oldest.date) oldest = bucket;
        }
      }
      if (!oldest) return;
      if (buckets > 1) {
        this.total -= oldest.movements.length;
        const dates = this.byOrganization.get(oldest.organizationId);
        dates?.delete(oldest.date);
        if (dates?.size === 0) this.byOrganization.delete(oldest.organizationId);
        continue;
      }
      if (!oldest.sorted) {
        oldest.movements.sort((a, b) => a.bookedAt - b.bookedAt);
        oldest.sorted = true;
      }
      // Down to 99 % of the bound, so that the next bookings do not copy the date again.
      const excess = this.total - Math.floor(this.maxMovements * 0.99);
      oldest.movements = oldest.movements.slice(excess);
      this.total -= excess;
    }
  }
}
