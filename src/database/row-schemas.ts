/**
 * zod shapes of the column types that every read repeats, for the row schemas the
 * repositories parse their results with (queryRows, parsed-rows.ts).
 */
import { z } from 'zod';

/** A timestamptz, as a Date (pg gives a Date; a value selected as text is parsed). */
export const timestampField = z.union([z.date(), z.string()]).transform((value) => new Date(value));
