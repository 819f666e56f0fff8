/**
 * Rows read through a zod schema: the one way a read model turns what Postgres returns
 * into typed objects (rows are validated at the edge, never cast).
 */
import type { z } from 'zod';
import type { Sql } from './database.js';

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
