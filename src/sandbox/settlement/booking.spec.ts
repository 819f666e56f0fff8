import { describe, expect, it } from '@jest/globals';
import { isLateLine, planLines, SettlementBooking } from './booking.js';

const DAY = 86_400_000;
const AT = Date.parse('2026-03-05T10:00:00.000Z');

describe('settlement timing', () => {
  it('books a deterministic, seeded share of lines a night late', () => {
    const late = (seed: number, percent: number) =>
      Array.from({ length: 10_000 }, (_, n) => n).filter((n) =>
        isLateLine({ latePercent: percent, seed }, n),
      );
    const tenPercent = late(29, 10);
    expect(tenPercent.length).toBeGreaterThan(900);
    expect(tenPercent.length).toBeLessThan(1100);
    expect(late(29, 10)).toEqual(tenPercent); // the same in every run
    expect(tenPercent.slice(0, 3)).toEqual([7, 28, 39]);
    expect(late(30, 10)).not.toEqual(tenPercent); // another seed, other lines
    expect(late(29, 0)).toEqual([]);
    expect(late(29, 100)).toHaveLength(10_000);
  });

  it('plans one line on the day, a night late, N days late, twice or never', () => {
    expect(planLines(AT, 5000, false, undefined)).toEqual([{ bookedAt: AT, grossMinor: 5000 }]);
    expect(planLines(AT, 5000, true, undefined)).toEqual([
      { bookedAt: AT + DAY, grossMinor: 5000 },
    ]);
    // lateDays replaces the seeded decision, both ways
    expect(planLines(AT, 5000, true, { lateDays: 0 })).toEqual([
      { bookedAt: AT, grossMinor: 5000 },
    ]);
    expect(planLines(AT, 5000, false, { lateDays: 3 })).toEqual([
      { bookedAt: AT + 3 * DAY, grossMinor: 5000 },
    ]);
    expect(planLines(AT, 5000, false, { grossMinor: 4999 })).toEqual([
      { bookedAt: AT, grossMinor: 4999 },
    ]);
    expect(planLines(AT, 5000, false, { twice: true, lateDays: 2 })).toEqual([
      { bookedAt: AT + 2 * DAY, grossMinor: 5000 },
      { bookedAt: AT + 3 * DAY, grossMinor: 5000 },
    ]);
    expect(planLines(AT, 5000, true, { never: true })).toEqual([]);
  });

  it('uses a control for its count of lines of its kind, then books as usual', () => {
    const booking = new SettlementBooking({ latePercent: 0, seed: 1 });
    booking.control('p1', 'payment', { never: true }, 2);
    booking.control('p1', 'refund', { grossMinor: -900 }, 1);
    expect(booking.plan('p2', 'payment', AT, 100)).toHaveLength(1);
    expect(booking.plan('p1', 'refund', AT, -1000)).toEqual([{ bookedAt: AT, grossMinor: -900 }]);
    expect(booking.plan('p1', 'refund', AT, -1000)).toEqual([{ bookedAt: AT, grossMinor: -1000 }]);
    expect(booking.plan('p1', 'payment', AT, 100)).toEqual([]);
    expect(booking.plan('p1', 'payment', AT, 100)).toEqual([]);
    expect(booking.plan('p1', 'payment', AT, 100)).toEqual([{ bookedAt: AT, grossMinor: 100 }]);
  });

  it('counts lines from the last reset or configuration, and forgets controls on reset', () => {
    const booking = new SettlementBooking({ latePercent: 10, seed: 29 });
    const days = () =>
      Array.from(
        { length: 10 },
        () => (booking.plan('p', 'payment', AT, 1)[0]?.bookedAt ?? 0) - AT,
      );
    const first = days();
    expect(first.filter((delta) => delta === DAY)).toHaveLength(1); // line 7
    expect(first[7]).toBe(DAY);
    booking.reset();
    expect(days()).toEqual(first);
    booking.configure({ latePercent: 0, seed: 29 });
    expect(days().every((delta) => delta === 0)).toBe(true);
    booking.control('p', 'payment', { twice: true }, 1);
    expect(booking.clear('p')).toBe(1);
    expect(booking.clear('p')).toBe(0);
    booking.control('p', 'payment', { never: true }, 1);
    booking.reset();
    expect(booking.timing).toEqual({ latePercent: 10, seed: 29 });
    expect(booking.plan('p', 'payment', AT, 1)).toHaveLength(1);
  });
});
