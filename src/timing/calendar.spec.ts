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

  it('agrees with the Date parser on every day 00 to 31 of every month of 1896 to 2104', () => {
    const byDateParser = (value: string): boolean => {
      const time = Date.parse(`${value}T00:00:00Z`);
      return !Number.isNaN(time) && new Date(time).toISOString().startsWith(value);
    };
    const disagreements: string[] = [];
    for (let year = 1896; year <= 2104; year++) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          const value = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          if (isIsoDate(value) !== byDateParser(value)) disagreements.push(value);
        }
      }
    }
    expect(disagreements).toEqual([]);
    expect(isIsoDate('2000-02-29')).toBe(true);
    expect(isIsoDate('1900-02-29')).toBe(false);
    expect(isIsoDate('2026-02-29')).toBe(false);
  });
});
