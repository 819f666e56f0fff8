import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { z } from 'zod';
import {
  EPOCH_MILLISECONDS_FROM,
  lenientAmount,
  lenientCalendarDate,
  lenientTimestamp,
  readAmount,
  readCalendarDate,
  readCount,
  readIdentifier,
  readLifetimeSeconds,
  readTimestamp,
  type LenientResult,
} from './payflow.lenient.js';

const AT = '2026-12-01T10:15:30.000Z';
const AT_MS = Date.parse(AT);
const AT_S = AT_MS / 1000;

function value<T>(result: LenientResult<T>): T {
  if (!result.ok) throw new Error(`expected ok, got: ${result.problem}`);
  return result.value;
}

function problem<T>(result: LenientResult<T>): string {
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.problem;
}

describe('readTimestamp', () => {
  it.each<[string, unknown]>([
    ['ISO text in UTC', AT],
    ['ISO text without milliseconds', '2026-12-01T10:15:30Z'],
    ['ISO text with an offset', '2026-12-01T11:15:30+01:00'],
    ['ISO text with a basic offset', '2026-12-01T05:15:30-0500'],
    ['ISO text with an hour offset', '2026-12-01T12:15:30+02'],
    ['ISO text with a space and no offset (UTC)', '2026-12-01 10:15:30'],
    ['ISO text with microseconds (cut)', '2026-12-01T10:15:30.000999Z'],
    ['epoch seconds', AT_S],
    ['epoch milliseconds', AT_MS],
    ['epoch seconds as text', String(AT_S)],
    ['epoch milliseconds as text', ` ${AT_MS} `],
  ])('reads %s', (_what, input) => {
    expect(value(readTimestamp(input))).toBe(AT);
  });

  it('reads fractional epoch seconds to the millisecond', () => {
    expect(value(readTimestamp(AT_S + 0.25))).toBe('2026-12-01T10:15:30.250Z');
  });

  it('reads a bare date as its midnight UTC', () => {
    expect(value(readTimestamp('2026-12-01'))).toBe('2026-12-01T00:00:00.000Z');
  });

  it.each([null, undefined, '', '   '])('reads %p as null', (input) => {
    expect(value(readTimestamp(input))).toBeNull();
  });

  it.each<unknown>([
    'yesterday',
    '2026-02-30T10:00:00Z',
    '2026-12-01T24:00:00Z',
    '2026-12-01T10:60:00Z',
    '2026-12-01T10:00:00+25:00',
    -1,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    1e20,
    true,
    {},
    [AT],
  ])('refuses %p without echoing it', (input) => {
    const text = problem(readTimestamp(input));
    expect(text).toBe('must be an ISO 8601 time, epoch seconds or epoch milliseconds');
  });

  it('tells seconds from milliseconds by magnitude', () => {
    expect(value(readTimestamp(EPOCH_MILLISECONDS_FROM - 1))).toBe(
      new Date((EPOCH_MILLISECONDS_FROM - 1) * 1000).toISOString(),
    );
    expect(value(readTimestamp(EPOCH_MILLISECONDS_FROM))).toBe('1973-03-03T09:46:40.000Z');
  });

  it('reads any time between 1973 and 5138 the same in seconds and in milliseconds', () => {
    const from = EPOCH_MILLISECONDS_FROM;
    fc.assert(
      fc.property(fc.integer({ min: from, max: from * 1000 - 1000 }), (ms) => {
        const whole = ms - (ms % 1000);
        expect(value(readTimestamp(whole))).toBe(value(readTimestamp(whole / 1000)));
        expect(value(readTimestamp(new Date(whole).toISOString()))).toBe(
          new Date(whole).toISOString(),
        );
      }),
    );
  });
});

describe('readCalendarDate', () => {
  it.each<[string, unknown, string]>([
    ['a date', '2026-12-01', '2026-12-01'],
    ['a date-time in UTC', '2026-12-01T00:00:00Z', '2026-12-01'],
    ['a date-time as written in its offset', '2026-12-01T00:00:00+01:00', '2026-12-01'],
    ['a late date-time as written in its offset', '2026-12-01T23:30:00-05:00', '2026-12-01'],
    ['epoch milliseconds (UTC date)', Date.parse('2026-12-01T00:00:00Z'), '2026-12-01'],
    ['epoch seconds (UTC date)', Date.parse('2026-12-01T23:59:59Z') / 1000, '2026-12-01'],
    ['epoch seconds as text', String(Date.parse('2026-12-01T12:00:00Z') / 1000), '2026-12-01'],
  ])('reads %s', (_what, input, expected) => {
    expect(value(readCalendarDate(input))).toBe(expected);
  });

  it.each([null, undefined, ''])('reads %p as null', (input) => {
    expect(value(readCalendarDate(input))).toBeNull();
  });

  it.each<unknown>(['2026-02-30', '2026-12-01T25:00:00Z', '01.12.2026', 'soon', -5, false])(
    'refuses %p',
    (input) => {
      expect(problem(readCalendarDate(input))).toBe(
        'must be a date YYYY-MM-DD, an ISO 8601 date-time or an epoch time',
      );
    },
  );
});

describe('readAmount', () => {
  it('keeps a JSON number and decimal text exactly as sent', () => {
    expect(value(readAmount(1249.5))).toBe(1249.5);
    expect(value(readAmount('1249.50'))).toBe('1249.50');
    expect(value(readAmount(' -3 '))).toBe('-3');
    expect(value(readAmount('1e2'))).toBe('1e2');
  });
});

describe('readCount', () => {
  it('reads whole numbers and digit text', () => {
    expect(value(readCount(0))).toBe(0);
    expect(value(readCount(13))).toBe(13);
    expect(value(readCount(' 42 '))).toBe(42);
  });
});

describe('readLifetimeSeconds', () => {
  it('reads seconds as a number or text, cutting fractions', () => {
    expect(value(readLifetimeSeconds(3600))).toBe(3600);
    expect(value(readLifetimeSeconds('3600'))).toBe(3600);
    expect(value(readLifetimeSeconds(59.9))).toBe(59);
  });

  it('leaves null and absent to the caller’s default', () => {
    expect(value(readLifetimeSeconds(null))).toBeUndefined();
    expect(value(readLifetimeSeconds(undefined))).toBeUndefined();
  });
});

describe.each<[string, (input: unknown) => LenientResult<unknown>, unknown[]]>([
  [
    'readAmount',
    readAmount,
    ['12,50', '', 'NaN', Number.NaN, Number.POSITIVE_INFINITY, null, undefined, {}],
  ],
  ['readCount', readCount, [-1, 1.5, '1.5', '-1', '', 'x', null, undefined, 2 ** 60]],
  ['readLifetimeSeconds', readLifetimeSeconds, [0, -60, 0.5, 'soon', '', true]],
])('%s', (_reader, read, refused) => {
  it.each(refused)('refuses %p', (input) => {
    expect(read(input).ok).toBe(false);
  });
});

describe('readIdentifier', () => {
  it('reads text and whole numbers as text', () => {
    expect(value(readIdentifier('abc'))).toBe('abc');
    expect(value(readIdentifier(1001))).toBe('1001');
    expect(readIdentifier('').ok).toBe(false);
    expect(readIdentifier(1.5).ok).toBe(false);
  });
});

describe('the zod wrappers', () => {
  const record = z.looseObject({
    at: lenientTimestamp,
    due: lenientCalendarDate,
    amount: lenientAmount,
  });

  it('normalize inside an object, allow absent fields and keep unknown ones', () => {
    expect(record.parse({ at: AT_MS, due: '2026-12-01T00:00:00Z', amount: '10.50', x: 1 })).toEqual(
      { at: AT, due: '2026-12-01', amount: '10.50', x: 1 },
    );
    expect(record.parse({ amount: 1 })).toEqual({ at: null, due: null, amount: 1 });
  });

  it('report a failure at the field, with the rule and not the value', () => {
    const parsed = record.safeParse({ at: 'garbage-secret', amount: 1 });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues).toEqual([
      expect.objectContaining({
        path: ['at'],
        message: 'must be an ISO 8601 time, epoch seconds or epoch milliseconds',
      }),
    ]);
    expect(JSON.stringify(parsed.error?.issues)).not.toContain('garbage-secret');
  });

  it('show the accepted JSON shapes in JSON Schema (the sandbox’s OpenAPI)', () => {
    const schema = z.toJSONSchema(record, { io: 'input', unrepresentable: 'any' });
    expect(schema).toMatchObject({
      properties: {
        at: { type: ['string', 'number', 'null'] },
        amount: { type: ['number', 'string'] },
      },
      required: ['amount'],
    });
  });
});
