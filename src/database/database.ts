/**
 * Plain SQL on the pg pool that TypeORM opened. TypeORM owns the schema (entities and
 * migrations); the hot paths write with explicit SQL, so that many events' state changes
 * can share one transaction and every statement is visible in review.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { describeError } from '../errors/app-error.js';
import { APP_LOGGER } from '../logging/logger.module.js';
import type { AppLogger } from '../logging/logger.js';
import { PgListener, type ListenHandle, type ListenSubscriber } from './pg-listener.js';
import {
  checkOut,
  guardPool,
  unavailableOr,
  type CheckOutOptions,
  type HeldConnection,
} from './pooled-connection.js';

export type { ListenHandle, ListenSubscriber } from './pg-listener.js';

/** A connection checked out of the pool, for code that must hold one (session locks, LISTEN). */
export type PoolClient = pg.PoolClient;

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
 * `sql` whose failures for want of a connection (Postgres restarting, the session ended)
 * are DatabaseUnavailableError: the failure policy waits for Postgres instead of backing
 * off further with every try (pooled-connection.ts).
 */
function unavailableAware(sql: Sql): Sql {
  return {
    async query<R extends object>(text: string, params?: readonly unknown[]): Promise<R[]> {
      try {
        return await sql.query<R>(text, params);
      } catch (error) {
        throw unavailableOr(error);
      }
    },
    async execute(text: string, params?: readonly unknown[]): Promise<number> {
      try {
        return await sql.execute(text, params);
      } catch (error) {
        throw unavailableOr(error);
      }
    },
  };
}

/**
 * Runs `work` on a pooled client for its exclusive use (checkOut: the client's loss is
 * heard, and a lost client is destroyed instead of going back to the pool, also when the
 * loss showed only as the error a statement failed with). No connection to be had, or
 * the connection lost, is a DatabaseUnavailableError.
 */
export async function withPooledClient<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  options: CheckOutOptions = {},
): Promise<T> {
  let held: HeldConnection;
  try {
    held = await checkOut(pool, options);
  } catch (error) {
    throw unavailableOr(error);
  }
  try {
    return await work(held.client);
  } catch (error) {
    held.failed(error);
    throw unavailableOr(error);
  } finally {
    held.release();
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

/** At most one warning per this interval about idle connections lost (see Database). */
const IDLE_LOSS_LOG_INTERVAL_MS = 10_000;

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

  private readonly logger: AppLogger | undefined;
  private idleLossLoggedAt = Number.NEGATIVE_INFINITY;

  constructor(
    @Inject(DataSource) dataSource: DataSource,
    @Optional() @Inject(APP_LOGGER) logger?: AppLogger,
  ) {
    const master: unknown = Reflect.get(dataSource.driver, 'master');
    if (!(master instanceof pg.Pool)) {
      throw new Error('the TypeORM data source is not initialized on a pg pool');
    }
    this.pool = master;
    this.sql = unavailableAware(sqlOf(master));
    this.logger = logger?.child({ component: 'database' });
    // TypeORM listens too, but logs through its own logger, which is off: without this,
    // connections lost while idle (every one of them at a Postgres restart) go unseen.
    guardPool(master, (error) => this.idleConnectionLost(error));
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
    const onLost = (error: Error): void => {
      // The lock went with the session: another replica may start the same job now.
      this.logger?.warn(
        { lock, error: describeError(error) },
        'lost the database session holding a job lock; the job goes on without it',
      );
    };
    return withPooledClient(
      this.pool,
      async (client) => {
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
      },
      { onLost },
    );
  }

  /**
   * A pooled connection died while idle: logged once per burst (a restart ends every one
   * of them at once); the pool opens new ones on demand.
   */
  private idleConnectionLost(error: Error): void {
    const now = Date.now();
    if (now - this.idleLossLoggedAt < IDLE_LOSS_LOG_INTERVAL_MS) return;
    this.idleLossLoggedAt = now;
    this.logger?.warn(
      { error: describeError(error) },
      'database connections lost while idle in the pool; new ones are opened on demand',
    );
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
