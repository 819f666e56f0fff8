/**
 * Tolerant readers for the fields of Payflow's answers whose shape the spec leaves open: typed
 * `any` (`successfullyChargedAt`, `lastFailedAt`, `dueDate`) or "not shown" (whole answers such
 * as the token's, the documents', and those of PUT/DELETE installment and cancel). Each reader
 * accepts every JSON shape a server may reasonably send for the value and normalizes it into
 * the one shape the client's results use (docs/assumptions.md "Reading what the spec leaves
 * open"):
 *
 * - a point in time → canonical ISO 8601 UTC text (`2026-12-01T10:00:00.000Z`) or null;
 * - a calendar date → `YYYY-MM-DD` or null;
 * - an amount → exact decimal (a JSON number or decimal text), turned into minor units by
 *   the mapping with src/money/money.ts, never by float arithmetic;
 * - a count → a non-negative integer.
 *
 * The `read*` functions are pure and return their failure as a value (the problem names the
 * rule, never the value, which may be anything a server sent). The `lenient*` zod schemas wrap
 * them for the shared wire schemas (payflow.schemas.ts); a failure there becomes the client's
 * PAYFLOW.BAD_RESPONSE. Where the spec is strict (amounts are JSON numbers, counts integers),
 * the wire schemas keep their strict types and do not use these.
 */
import { z } from 'zod';
import { parseDecimal } from '../../money/money.js';

export type LenientResult<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

const ok = <T>(value: T): LenientResult<T> => ({ ok: true, value });
const fail = <T>(problem: string): LenientResult<T> => ({ ok: false, problem });

/**
 * Epoch numbers below this are seconds, from it on milliseconds. 1e11 s is the year 5138 and
 * 1e11 ms is 1973-03-03, so no time Payflow can mean falls in the overlap.
 */
export const EPOCH_MILLISECONDS_FROM = 1e11;

const NUMERIC_TEXT = /^\d+(?:\.\d+)?$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** ISO 8601 / RFC 3339 date-time; also a space for the T, and no or a basic-format offset. */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/** Epoch ms of a calendar date's midnight UTC, or undefined when the date does not exist. */
function utcMidnight(year: string, month: string, day: string): number | undefined {
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  const time = new Date(0).setUTCFullYear(y, m - 1, d);
  const date = new Date(time);
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d
    ? time
    : undefined;
}

/** Offset in minutes east of UTC ("Z", "+01:00", "-0530", "+02"); undefined when out of range. */
function offsetMinutes(text: string | undefined): number | undefined {
  if (text === undefined || text === 'Z' || text === 'z') return 0;
  const sign = text.startsWith('-') ? -1 : 1;
  const digits = text.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

/** Epoch ms of an ISO 8601 date or date-time text, or undefined when it is not one. */
function parseIsoTime(text: string): number | undefined {
  const date = DATE_ONLY.exec(text);
  if (date) return utcMidnight(date[1] ?? '', date[2] ?? '', date[3] ?? '');
  const match = DATE_TIME.exec(text);
  if (!match) return undefined;
  const [, year = '', month = '', day = '', hour = '', minute = '', second = '0'] = match;
  const midnight = utcMidnight(year, month, day);
  const offset = offsetMinutes(match[8]);
  const h = Number(hour);
  const m = Number(minute);
  const s = Number(second);
  if (midnight === undefined || offset === undefined || h > 23 || m > 59 || s > 59) {
    return undefined;
  }
  // Fractions finer than a millisecond are cut, not rounded (the next second never appears).
  const milliseconds = Number((match[7] ?? '').slice(0, 3).padEnd(3, '0'));
  return midnight + ((h * 60 + m - offset) * 60 + s) * 1000 + milliseconds;
}

/** Epoch ms of an epoch number in seconds or milliseconds (told apart by magnitude). */
function epochMilliseconds(value: number): number | undefined {
  if (!Number.isFinite(value) || value < 0) return undefined;
  return Math.round(value < EPOCH_MILLISECONDS_FROM ? value * 1000 : value);
}

function isoText(milliseconds: number | undefined): string | undefined {
  if (milliseconds === undefined) return undefined;
  const date = new Date(milliseconds);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function isBlank(value: unknown): value is null | undefined | '' {
  return value === null || value === undefined || (typeof value === 'string' && !value.trim());
}

/**
 * A point in time: ISO 8601 text (a date-time, with or without an offset, read as UTC
 * without one; or a bare date, read as its midnight UTC), epoch seconds or epoch
 * milliseconds as a number or as digit text, null, absent or empty text (null).
 */
export function readTimestamp(value: unknown): LenientResult<string | null> {
  if (isBlank(value)) return ok(null);
  let iso: string | undefined;
  if (typeof value === 'number') {
    iso = isoText(epochMilliseconds(value));
  } else if (typeof value === 'string') {
    const text = value.trim();
    iso = NUMERIC_TEXT.test(text)
      ? isoText(epochMilliseconds(Number(text)))
      : isoText(parseIsoTime(text));
  }
  return iso === undefined
    ? fail('must be an ISO 8601 time, epoch seconds or epoch milliseconds')
    : ok(iso);
}

/**
 * A calendar date, as `YYYY-MM-DD`: a date as is (it must exist); a date-time text by the
 * date it names, as written in its own offset (`2026-12-01T00:00:00+01:00` is 2026-12-01);
 * an epoch (seconds or milliseconds, number or digit text) by its UTC date; null, absent or
 * empty text is null.
 */
export function readCalendarDate(value: unknown): LenientResult<string | null> {
  if (isBlank(value)) return ok(null);
  const problem = 'must be a date YYYY-MM-DD, an ISO 8601 date-time or an epoch time';
  if (typeof value === 'string') {
    const text = value.trim();
    if (!NUMERIC_TEXT.test(text)) {
      // The whole text must be a valid time; its date is then the first ten characters.
      return parseIsoTime(text) === undefined ? fail(problem) : ok(text.slice(0, 10));
    }
  }
  const time = readTimestamp(value);
  if (!time.ok || time.value === null) return fail(problem);
  return ok(time.value.slice(0, 10));
}

/**
 * An amount, exactly as sent: a finite JSON number, or decimal text ("1249.50", "-3",
 * "1e2"; surrounding spaces dropped). The mapping turns it into minor units of the
 * payment's currency (money.ts `toMinorUnits`), refusing more decimals than the currency has.
 */
export function readAmount(value: unknown): LenientResult<number | string> {
  if (typeof value === 'number') {
    return Number.isFinite(value) ? ok(value) : fail('must be a finite amount');
  }
  if (typeof value === 'string') {
    const text = value.trim();
    try {
      parseDecimal(text);
      return ok(text);
    } catch {
      return fail('must be a decimal amount');
    }
  }
  return fail('must be an amount (a number or decimal text)');
}

/** A count (a size, a number of tries): a non-negative integer, as a number or digit text. */
export function readCount(value: unknown): LenientResult<number> {
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+$/.test(value.trim())
        ? Number(value.trim())
        : Number.NaN;
  return Number.isSafeInteger(number) && number >= 0
    ? ok(number)
    : fail('must be a non-negative whole number');
}

/**
 * A lifetime in seconds (`expires_in`): a positive number or numeric text (fractions cut);
 * null or absent is undefined, for the caller's documented default.
 */
export function readLifetimeSeconds(value: unknown): LenientResult<number | undefined> {
  if (value === null || value === undefined) return ok(undefined);
  const number =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && NUMERIC_TEXT.test(value.trim())
        ? Number(value.trim())
        : Number.NaN;
  const seconds = Math.floor(number);
  return Number.isSafeInteger(seconds) && seconds > 0
    ? ok(seconds)
    : fail('must be a positive number of seconds');
}

/** An identifier: text, or a whole number written as text. */
export function readIdentifier(value: unknown): LenientResult<string> {
  if (typeof value === 'string' && value.trim() !== '') return ok(value);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return ok(String(value));
  return fail('must be a non-empty identifier');
}

// ---------------------------------------------------------------- zod wrappers

/** The JSON shapes these fields accept on the wire (what the OpenAPI document shows). */
const scalar = z.union([z.string(), z.number(), z.null()]);

function lenient<T>(
  input: z.ZodType<string | number | null | undefined>,
  read: (value: unknown) => LenientResult<T>,
) {
  return input.transform((value, context): T => {
    const result = read(value);
    if (result.ok) return result.value;
    context.addIssue({ code: 'custom', message: result.problem });
    return z.NEVER;
  });
}

/** A point in time of any accepted shape → ISO 8601 UTC text or null (absent allowed). */
export const lenientTimestamp = lenient(scalar.optional(), readTimestamp);
/** A calendar date of any accepted shape → `YYYY-MM-DD` or null (absent allowed). */
export const lenientCalendarDate = lenient(scalar.optional(), readCalendarDate);
/** An amount as a JSON number or decimal text → the exact decimal (required). */
export const lenientAmount = lenient(z.union([z.number(), z.string()]), readAmount);
/** A non-negative integer as a number or digit text (required). */
export const lenientCount = lenient(z.union([z.number(), z.string()]), readCount);
/** `expires_in` → seconds, or undefined when null or absent. */
export const lenientLifetimeSeconds = lenient(scalar.optional(), readLifetimeSeconds);
/** An identifier as text or a whole number → text (required). */
export const lenientIdentifier = lenient(z.union([z.string(), z.number()]), readIdentifier);
