import { describe, expect, it } from '@jest/globals';
import { addDays, dateIn, datesBetween, isIsoDate, isTimeZone } from './calendar.js';

describe('calendar dates', () => {
  it('gives the date of an instant in a time zone', () => {
    // 23:30 UTC on the 21st is already 00:30 on the 22nd in Oslo (winter, UTC+1).
    const now = new Date('2026-11-21T23:30:00Z');
    expect(dateIn(now, 'Europe/Oslo')).toBe('2026-11-22');
    expect(dateIn(now, 'UTC')).toBe('2026-11-21');
  });

  it('steps over daylight saving changes without skipping or repeating a day', () => {
    expect(datesBetween('2026-03-28', '2026-03-30')).toEqual([
      '2026-03-28',
      '2026-03-29',
      '2026-03-30',
    ]);
    expect(addDays('2026-10-25', 1)).toBe('2026-10-26');
    expect(datesBetween('2026-03-30', '2026-03-28')).toEqual([]);
  });

  it('crosses month and leap-year ends', () => {
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2027-02-28', 1)).toBe('2027-03-01');
    expect(addDays('2027-01-01', -1)).toBe('2026-12-31');
  });

  it('recognizes real dates and known time zones only', () => {
    expect(isIsoDate('2026-02-28')).toBe(true);
    expect(isIsoDate('2026-02-30')).toBe(false);
    expect(isIsoDate('2026-2-3')).toBe(false);
    expect(isTimeZone('Europe/Oslo')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
