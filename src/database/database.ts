/**
 * Plain SQL on the pg pool that TypeORM opened. TypeORM owns the schema (entities and
 * migrations); the hot paths write with explicit SQL, so that many events' state changes
 * can share one transaction and every statement is visible in review.
 */
import { Inject, Injectable } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';

/** Something that runs SQL: the pool (autocommit) or a transaction's client. */
export interface Sql {
  /** Rows of a SELECT or a … RETURNING. */
  query<R extends object = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
  ): Promise<R[]>;
  /** Number of rows an INSERT/UPDATE/DELETE touched. */
  execute(text: string, params?: readonly unknown[]): Promise<number>;
}

export function sqlOf(client: pg.Pool | pg.PoolClient | pg.Client): Sql {
  return {
    async query<R extends object>(text: string, params: readonly unknown[] = []): Promise<R[]> {
      const result = await client.query<R>(text, params as unknown[]);
      return result.rows;
    },
    async execute(text: string, params: readonly unknown[] = []): Promise<number> {
      const result = await client.query(text, params as unknown[]);
      return result.rowCount ?? 0;
    },
  };
}

@Injectable()
export class Database {
  readonly pool: pg.Pool;
  /** Autocommit: each statement is its own transaction. */
  readonly sql: Sql;

  constructor(@Inject(DataSource) dataSource: DataSource) {
    const master: unknown = Reflect.get(dataSource.driver, 'master');
    if (!(master instanceof pg.Pool)) {
      throw new Error('the TypeORM data source is not initialized on a pg pool');
    }
    this.pool = master;
    this.sql = sqlOf(master);
  }

  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(sqlOf(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}
