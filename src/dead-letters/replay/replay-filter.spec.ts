import { describe, expect, it } from '@jest/globals';
import {
  InvalidReplayFilterError,
  parseOrderId,
  parseReason,
  parseSince,
} from './replay-filter.js';

describe('replay filters', () => {
  const now = new Date('2026-11-21T12:00:00Z');

  it('reads --since as a date, a date-time or an age', () => {
    expect(parseSince('2026-11-20', now).toISOString()).toBe('2026-11-20T00:00:00.000Z');
    expect(parseSince('2026-11-20T10:30:00Z', now).toISOString()).toBe('2026-11-20T10:30:00.000Z');
    expect(parseSince('2026-11-20T10:30', now).toISOString()).toBe('2026-11-20T10:30:00.000Z');
    expect(parseSince('2026-11-20 10:30:00+01:00', now).toISOString()).toBe(
      '2026-11-20T09:30:00.000Z',
    );
    expect(parseSince('30m', now).toISOString()).toBe('2026-11-21T11:30:00.000Z');
    expect(parseSince('12h', now).toISOString()).toBe('2026-11-21T00:00:00.000Z');
    expect(parseSince('7d', now).toISOString()).toBe('2026-11-14T12:00:00.000Z');
    expect(parseSince(' 1w ', now).toISOString()).toBe('2026-11-14T12:00:00.000Z');
  });

  it('refuses what it cannot read, with one line naming the option', () => {
    for (const bad of ['yesterday', '2026-13-45', '12', '5y', '', '2026/11/20']) {
      expect(() => parseSince(bad, now)).toThrow(InvalidReplayFilterError);
      expect(() => parseSince(bad, now)).toThrow(/^--since must be/);
    }
  });

  it('knows the CONTRACT §4 reasons only', () => {
    expect(parseReason('in_doubt')).toBe('in_doubt');
    expect(parseReason(' invalid_json ')).toBe('invalid_json');
    expect(() => parseReason('IN_DOUBT')).toThrow(/--reason must be one of invalid_json, /);
    expect(() => parseReason('timeout')).toThrow(InvalidReplayFilterError);
  });

  it('wants a non-empty order id', () => {
    expect(parseOrderId(' SO-1 ')).toBe('SO-1');
    expect(() => parseOrderId('  ')).toThrow(/--order must not be empty/);
  });
});
