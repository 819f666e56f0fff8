/**
 * Plain SQL on the pg pool that TypeORM opened. TypeORM owns the schema (entities and
 * migrations); the hot paths write with explicit SQL, so that many events' state changes
 * can share one transaction and every statement is visible in review.
 */
import { Inject, Injectable } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { PgListener, type ListenHandle, type ListenSubscriber } from './pg-listener.js';

export type { ListenHandle, ListenSubscriber } from './pg-listener.js';

/** A connection checked out of the pool, for code that must hold one (session locks, LISTEN). */
export type PoolClient = pg.PoolClient;
/** What a LISTENing connection receives on NOTIFY. */
export type Notification = pg.Notification;

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

/**
 * A pooled client for exclusive use. pg-pool takes its own 'error' listener off a client
 * while it is checked out, so a connection that dies between two queries (Postgres
 * restarted, the session terminated) would raise an unhandled 'error' event and end the
 * process. This keeps a listener on for the whole checkout; the query in progress (or the
 * next one) fails as usual, and the broken client is discarded on release.
 */
export async function withPooledClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (error: Error): void => {
    broken ??= error;
  };
  client.on('error', onError);
  try {
    return await work(client);
  } finally {
    client.release(broken);
    client.off('error', onError);
  }
}

/** A savepoint opened in a transaction: `rollback` undoes every statement run since. */
export interface Savepoint {
  rollback(): Promise<void>;
}

/**
 * Opens a savepoint named `name` (an SQL identifier the caller chooses) in the transaction
 * `tx`, so that a part of it can be undone while the rest commits.
 */
export async function openSavepoint(tx: Sql, name: string): Promise<Savepoint> {
  await tx.execute(`SAVEPOINT ${name}`);
  return {
    rollback: async () => {
      await tx.execute(`ROLLBACK TO SAVEPOINT ${name}`);
    },
  };
}

/** A session advisory lock: pg_try_advisory_lock(namespace, key). */
export interface AdvisoryLock {
  readonly namespace: number;
  readonly key: number;
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

  /**
   * Delivers the NOTIFYs of `subscriber.channel` through the process's one LISTENing
   * connection (PgListener). Resolves once LISTENed to (or the first attempt failed).
   */
  listen(subscriber: ListenSubscriber): Promise<ListenHandle> {
    return PgListener.of(this.pool).subscribe(subscriber);
  }

  /** Answers when the database does (a readiness probe); rejects otherwise. */
  async ping(): Promise<void> {
    await this.sql.query('SELECT 1');
  }

  /**
   * Runs `work` while this process holds the session advisory lock, taken with
   * pg_try_advisory_lock on a connection of its own; when another session holds it,
   * returns null at once without running `work`. One replica at a time does the job.
   */
  async whileHolding<T>(lock: AdvisoryLock, work: () => Promise<T>): Promise<{ value: T } | null> {
    return withPooledClient(this.pool, async (client) => {
      const { rows } = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock($1, $2) AS locked',
        [lock.namespace, lock.key],
      );
      if (rows[0]?.locked !== true) return null;
      try {
        return { value: await work() };
      } finally {
        await client
          .query('SELECT pg_advisory_unlock($1, $2)', [lock.namespace, lock.key])
          .catch(() => undefined);
      }
    });
  }

  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return withPooledClient(this.pool, async (client) => {
      try {
        await client.query('BEGIN');
        const result = await work(sqlOf(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }
}
