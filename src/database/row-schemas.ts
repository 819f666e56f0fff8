/**
 * zod shapes of the column types that every read repeats, for the row schemas the
 * repositories parse their results with (queryRows, parsed-rows.ts).
 */
import { z } from 'zod';

/** A timestamptz, as a Date (pg gives a Date; a value selected as text is parsed). */
export const timestampField = z.union([z.date(), z.string()]).transform((value) => new Date(value));

/**
 * An amount in integer minor units selected as text (`bigint::text`, or a `sum(...)::text`),
 * as a number: refused unless it is a safe integer, so money is never rounded.
 */
export const minorUnitsField = z
  .union([z.string().regex(/^-?\d+$/), z.number().int()])
  .transform((value) => Number(value))
  .refine((value) => Number.isSafeInteger(value), { message: 'is not a safe integer' });
