/**
 * When and how a settlement line the sandbox collects is booked (docs/assumptions.md,
 * settlement timing and controls): on the day of collection, except a seeded share of the
 * lines booked a night late; and, for a payment a test chose with
 * POST /sandbox/payments/{id}/settlement, a different gross, twice (a second time a night
 * later), never, or N days late.
 *
 * The late decision is deterministic: line n (counted from 0 since the start or the last
 * reset) is late when FNV-1a(seed:n) mod 10,000 is below latePercent × 100. The same
 * sequence of bookings gives the same late lines in every run.
 */

const DAY_MS = 86_400_000;

export interface SettlementTiming {
  /** Share of lines booked on the next UTC day, in percent (0-100). */
  readonly latePercent: number;
  /** Seed of the late decisions (an unsigned 32-bit integer). */
  readonly seed: number;
}

export const DEFAULT_SETTLEMENT_TIMING: SettlementTiming = { latePercent: 10, seed: 29 };

/** A test's wish for a payment's next line(s) of one kind. */
export interface SettlementControl {
  /** The line's gross instead of the amount collected (refund: negative). */
  readonly grossMinor?: number | undefined;
  /** Booked twice: once as usual, again (another settlement id) a night later. */
  readonly twice?: boolean | undefined;
  /** Never booked. */
  readonly never?: boolean | undefined;
  /** Booked this many days after collection (instead of the seeded late decision). */
  readonly lateDays?: number | undefined;
}

export type LineKind = 'payment' | 'refund';

/** One line to book: when, and for how much. */
export interface PlannedLine {
  readonly bookedAt: number;
  readonly grossMinor: number;
}

/** 32-bit FNV-1a of text. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Whether line `sequence` is booked a night late. */
export function isLateLine(timing: SettlementTiming, sequence: number): boolean {
  if (timing.latePercent <= 0) return false;
  if (timing.latePercent >= 100) return true;
  return fnv1a(`${timing.seed}:${sequence}`) % 10_000 < Math.round(timing.latePercent * 100);
}

/**
 * The lines booked for money collected (or refunded) at `at`: none when the control says
 * never; else one (two with twice, the second a night after the first), on the day of
 * collection, `lateDays` later, or a night late when `late`.
 */
export function planLines(
  at: number,
  grossMinor: number,
  late: boolean,
  control: SettlementControl | undefined,
): PlannedLine[] {
  if (control?.never) return [];
  const days = control?.lateDays ?? (late ? 1 : 0);
  const first = { bookedAt: at + days * DAY_MS, grossMinor: control?.grossMinor ?? grossMinor };
  return control?.twice ? [first, { ...first, bookedAt: first.bookedAt + DAY_MS }] : [first];
}

interface PendingControl {
  readonly control: SettlementControl;
  remaining: number;
}

/** The sandbox's settlement timing and the pending controls, reset with the sandbox. */
export class SettlementBooking {
  private timingNow: SettlementTiming;
  private sequence = 0;
  private readonly pending = new Map<string, PendingControl>();

  constructor(private readonly initial: SettlementTiming = DEFAULT_SETTLEMENT_TIMING) {
    this.timingNow = initial;
  }

  get timing(): SettlementTiming {
    return this.timingNow;
  }

  /** Changes the timing until the next reset; the line count starts again from 0. */
  configure(timing: SettlementTiming): void {
    this.timingNow = timing;
    this.sequence = 0;
  }

  reset(): void {
    this.timingNow = this.initial;
    this.sequence = 0;
    this.pending.clear();
  }

  /** Sets (replaces) the control of a payment's next `count` lines of `kind`. */
  control(paymentId: string, kind: LineKind, control: SettlementControl, count: number): void {
    this.pending.set(key(paymentId, kind), { control, remaining: count });
  }

  /** Drops a payment's pending controls; returns how many there were. */
  clear(paymentId: string): number {
    let removed = 0;
    for (const kind of ['payment', 'refund'] as const) {
      if (this.pending.delete(key(paymentId, kind))) removed += 1;
    }
    return removed;
  }

  /** The lines to book for one collection or refund; uses up one line of its control. */
  plan(paymentId: string, kind: LineKind, at: number, grossMinor: number): PlannedLine[] {
    const late = isLateLine(this.timingNow, this.sequence);
    this.sequence += 1;
    const pendingKey = key(paymentId, kind);
    const pending = this.pending.get(pendingKey);
    if (pending) {
      pending.remaining -= 1;
      if (pending.remaining <= 0) this.pending.delete(pendingKey);
    }
    return planLines(at, grossMinor, late, pending?.control);
  }
}

function key(paymentId: string, kind: LineKind): string {
  return `${kind}:${paymentId}`;
}
