import { describe, expect, it } from '@jest/globals';
import { nightsToTrack, previousNight } from './nights.js';

describe('settlement nights', () => {
  it('takes the previous calendar day in the configured time zone', () => {
    // 23:30 UTC on the 21st is already 00:30 on the 22nd in Oslo (winter, UTC+1).
    const now = new Date('2026-11-21T23:30:00Z');
    expect(previousNight(now, 'Europe/Oslo')).toBe('2026-11-21');
    expect(previousNight(now, 'UTC')).toBe('2026-11-20');
    // 02:30 Oslo on the day summer time starts (clocks jump 02:00 → 03:00).
    expect(previousNight(new Date('2026-03-29T01:30:00Z'), 'Europe/Oslo')).toBe('2026-03-28');
  });

  it('tracks every night after the newest known one, or only the last night at first', () => {
    expect(nightsToTrack(null, '2026-11-21')).toEqual(['2026-11-21']);
    expect(nightsToTrack('2026-11-18', '2026-11-21')).toEqual([
      '2026-11-19',
      '2026-11-20',
      '2026-11-21',
    ]);
    expect(nightsToTrack('2026-11-21', '2026-11-21')).toEqual([]);
    expect(nightsToTrack('2026-11-25', '2026-11-21')).toEqual([]);
  });
});
