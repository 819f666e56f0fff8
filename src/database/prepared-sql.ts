/**
 * SQL on one checked-out connection, as the transaction batcher runs it: statements with
 * parameters become named prepared statements (each pooled connection parses and plans a
 * hot statement once). (Which errors lose a connection: pooled-connection.ts.)
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Sql } from './database.js';

/** Sql on a batch's connection; `check` runs before every statement. */
export function sqlOn(client: pg.PoolClient, check: () => void): Sql {
  return {
    async query<R extends object>(text: string, params: readonly unknown[] = []): Promise<R[]> {
      check();
      const result = await client.query<R>(statement(text, params));
      return result.rows;
    },
    async execute(text: string, params: readonly unknown[] = []): Promise<number> {
      check();
      const result = await client.query(statement(text, params));
      return result.rowCount ?? 0;
    },
  };
}

/** Names of the prepared statements, by SQL text (bounded: dynamic SQL is not cached). */
const statementNames = new Map<string, string>();
const MAX_STATEMENT_NAMES = 1_000;

/**
 * A query with parameters runs as a named prepared statement, so that each pooled
 * connection parses and plans it once: the hot statements of the handlers are few, fixed
 * texts executed thousands of times a second.
 */
function statement(text: string, params: readonly unknown[]): pg.QueryConfig {
  const values = params as unknown[];
  if (values.length === 0) return { text, values };
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_STATEMENT_NAMES) return { text, values };
    name = `pfb_${createHash('sha1').update(text).digest('hex')}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}
