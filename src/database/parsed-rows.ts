/**
 * Rows read through a zod schema: the one way a read model turns what Postgres returns
 * into typed objects (rows are validated at the edge, never cast).
 */
import { z } from 'zod';
import type { Sql } from './database.js';
import { timestampField } from './row-schemas.js';

/** Runs `text` and parses every row it returns with `schema`. */
export async function queryRows<S extends z.ZodType>(
  sql: Sql,
  schema: S,
  text: string,
  params: readonly unknown[],
): Promise<z.infer<S>[]> {
  const rows = await sql.query(text, params);
  return rows.map((row) => schema.parse(row));
}

/** Rows per hour of a table, counted by one of its timestamp columns. */
export interface HourlyCount {
  readonly hour: Date;
  readonly count: number;
}

const hourlyCountRow = z.object({ hour: timestampField, count: z.number().int() });

/**
 * Rows of `table` per hour of `column` since `since` (hours without any are left out),
 * oldest first. `table` and `column` are the calling repository's own constants, never
 * input: they are spliced into the SQL.
 */
export function countsByHour(
  sql: Sql,
  table: string,
  column: string,
  since: Date,
): Promise<HourlyCount[]> {
  return queryRows(
    sql,
    hourlyCountRow,
    `SELECT date_trunc('hour', ${column}) AS hour, count(*)::int AS count
       FROM ${table} WHERE ${column} >= $1::timestamptz GROUP BY 1 ORDER BY 1`,
    [since],
  );
}
