/**
 * Group commit: the small units of work of many concurrent callers run together in one
 * Postgres transaction, so that N events cost one COMMIT instead of N.
 *
 * - A unit that throws rolls back only its own writes and rejects only its own caller; the
 *   others still commit. A batch first runs without savepoints (a SAVEPOINT per unit costs
 *   a round trip and a subtransaction per unit, and more than 64 subtransactions in one
 *   transaction slow down every snapshot in Postgres). When a unit fails after it ran a
 *   statement, that transaction is rolled back and the batch runs again with each unit in
 *   its own SAVEPOINT, so a unit may run twice (its SQL effects only count once: the first
 *   run was rolled back). A unit that fails without running a statement costs nothing.
 * - A unit's promise settles only after the COMMIT: a resolved unit is durable. A failed
 *   COMMIT (or a lost connection) rejects every unit of that batch with
 *   TransactionBatchError (transient: the caller may simply try again).
 * - A batch starts at once when no batch is running (idle), when `maxBatchSize` units
 *   wait, or when the oldest waiting unit has waited `maxDelayMs`; at most
 *   `maxConcurrentBatches` batches (connections) run at a time.
 *
 * A unit may also `defer` rows to a write shared by the batch (e.g. the outbox): the rows of
 * the units that succeeded are written together, by one call of the write's `flush`, after
 * the last unit and before the COMMIT, so that N units cost one statement there. A failing
 * flush fails the batch.
 *
 * Units run one after the other on the batch's connection, so a unit must only run SQL on
 * the `tx` it is given: no network calls, no waiting for other units, and never
 * `batcher.run` inside a unit (it would wait for itself). It must not swallow an SQL error
 * and go on using `tx` (the transaction is aborted until the unit ends). Since a unit may
 * run twice, it must keep no effect outside the database (do that after `run` resolves).
 * The order engine's exactly-once protocol makes this one of its rules
 * (src/orders/engine/protocol/attempt-protocol.ts): its begin and complete units return what
 * they decided instead of throwing, log nothing, and its memory of pending outcomes changes
 * only after their batch committed.
 */
import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { AppError } from '../errors/app-error.js';
import {
  runBatch,
  type BatchSql,
  type BatchUnit,
  type PoolLike,
  type Work,
} from './batch-transaction.js';
import { Database } from './database.js';
import {
  checkOut,
  isLostConnection,
  unavailableOr,
  type HeldConnection,
} from './pooled-connection.js';

export { TransactionBatchError, type BatchSql, type PoolLike } from './batch-transaction.js';

export interface TransactionBatcherOptions {
  /** Most units in one transaction. Default 256. */
  readonly maxBatchSize?: number;
  /** Longest wait of a unit for companions while other batches run. Default 2 ms. */
  readonly maxDelayMs?: number;
  /** Batches (pooled connections) running at once. Default 4. */
  readonly maxConcurrentBatches?: number;
  /** Most items in one `runGrouped` unit. Default 256. */
  readonly maxGroupSize?: number;
}

/** The batcher was closed: the unit was not run. */
export class TransactionBatcherClosedError extends AppError {
  readonly code = 'DATABASE.BATCHER_CLOSED';
  readonly transient = true;
}

export interface BatchStats {
  /** Transactions committed or attempted. */
  readonly batches: number;
  /** Units run. */
  readonly units: number;
  /** Largest batch seen. */
  readonly largestBatch: number;
}

/** What `onCommit` listeners learn about a committed batch. */
export interface CommittedBatch {
  /** Units whose writes it committed. */
  readonly units: number;
}

interface Unit extends BatchUnit {
  readonly enqueuedAt: number;
}

/** A grouped unit still taking items (see `runGrouped`). */
interface OpenGroup {
  readonly items: unknown[];
  readonly waiters: { resolve: (value: unknown) => void; reject: (error: unknown) => void }[];
}

const ONE = (): number => 1;

/** How often Postgres checks, during runAlone's statements, that the client is alive. */
const CLIENT_CHECK_MS = 100;

export class TransactionBatcher {
  private readonly maxBatchSize: number;
  private readonly maxDelayMs: number;
  private readonly maxConcurrent: number;
  private queue: Unit[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private closed = false;
  private readonly running = new Set<Promise<void>>();
  private counters = { batches: 0, units: 0, largestBatch: 0 };
  private readonly commitListeners = new Set<(batch: CommittedBatch) => void>();
  private readonly openGroups = new Map<object, OpenGroup>();
  private readonly maxGroupSize: number;
  /** Pool connections whose session checks for a vanished client (see runAlone). */
  private readonly checkedClients = new WeakSet<pg.PoolClient>();

  constructor(
    private readonly pool: PoolLike,
    options: TransactionBatcherOptions = {},
  ) {
    this.maxBatchSize = Math.max(1, options.maxBatchSize ?? 256);
    this.maxDelayMs = Math.max(0, options.maxDelayMs ?? 2);
    this.maxConcurrent = Math.max(1, options.maxConcurrentBatches ?? 4);
    this.maxGroupSize = Math.max(1, options.maxGroupSize ?? 256);
  }

  get stats(): BatchStats {
    return { ...this.counters };
  }

  /** Runs `work` in a shared transaction; resolves with its result once committed. */
  run<T>(work: Work<T>): Promise<T> {
    if (this.closed) {
      return Promise.reject(new TransactionBatcherClosedError('the transaction batcher is closed'));
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        work,
        enqueuedAt: performance.now(),
        resolve: resolve as (value: unknown) => void,
        reject,
        callers: ONE,
      });
      this.schedule();
    });
  }

  /**
   * One statement in a transaction of its own (autocommit), on a pool connection, outside
   * any batch: for a write whose caller must act the moment it is committed, which a batch
   * would hold until its last unit is done, and whose many callers would then all act at
   * once (the send hook's `sent_at`: each request leaves right after its own commit).
   *
   * Such a statement must not commit once its caller is gone: a worker killed while its
   * send mark waits in Postgres (for a lock, for a busy CPU) would leave a call marked sent
   * that never left, which the protocol then parks in doubt. So its connection asks
   * Postgres to check every CLIENT_CHECK_MS, while a statement runs, that the client is
   * still there, and to abort the statement when it is not (client_connection_check_interval,
   * Postgres 14 and later; set once per connection, ignored by an older server).
   */
  async runAlone<R extends pg.QueryResultRow>(
    text: string,
    values: readonly unknown[],
  ): Promise<R[]> {
    if (this.closed) {
      throw new TransactionBatcherClosedError('the transaction batcher is closed');
    }
    // Held with a listener for its loss (checkOut): a connection that dies while checked
    // out (Postgres restarting) fails the statement, not the process, and is not reused.
    // Either way, no connection is a DatabaseUnavailableError (a wait for Postgres).
    let held: HeldConnection;
    try {
      held = await checkOut(this.pool);
    } catch (error) {
      throw unavailableOr(error);
    }
    try {
      await this.checkClient(held.client);
      const result = await held.client.query<R>(text, [...values]);
      return result.rows;
    } catch (error) {
      held.failed(error);
      throw unavailableOr(error);
    } finally {
      held.release();
    }
  }

  /** Sets client_connection_check_interval on `client`'s session, once. */
  private async checkClient(client: pg.PoolClient): Promise<void> {
    if (this.checkedClients.has(client)) return;
    try {
      await client.query(`SET client_connection_check_interval = ${CLIENT_CHECK_MS}`);
    } catch (error) {
      // An older server does not know the setting; a broken connection fails the statement.
      if (isLostConnection(error)) throw error;
    }
    this.checkedClients.add(client);
  }

  /**
   * Like `run`, for work that many callers can share in one statement: the items given
   * with the same `key` while the unit waits to run are handled by ONE unit, `work(tx,
   * items)`, which returns one result per item, in order (at most `maxGroupSize` items per
   * unit). Each caller gets its item's result once committed; if the unit fails, every
   * caller of the group gets that error (it may then try again on its own with `run`).
   */
  runGrouped<I, R>(
    key: object,
    item: I,
    work: (tx: BatchSql, items: readonly I[]) => Promise<readonly R[]>,
  ): Promise<R> {
    if (this.closed) {
      return Promise.reject(new TransactionBatcherClosedError('the transaction batcher is closed'));
    }
    return new Promise<R>((resolve, reject) => {
      let group = this.openGroups.get(key);
      if (group === undefined || group.items.length >= this.maxGroupSize) {
        const opened: OpenGroup = { items: [], waiters: [] };
        group = opened;
        this.openGroups.set(key, opened);
        this.queue.push({
          work: async (tx) => {
            // Running: later items start a new group.
            if (this.openGroups.get(key) === opened) this.openGroups.delete(key);
            const results = await work(tx, opened.items as I[]);
            if (results.length !== opened.items.length) {
              throw new Error(
                `a grouped unit returned ${results.length} results for ${opened.items.length} items`,
              );
            }
            return results;
          },
          enqueuedAt: performance.now(),
          resolve: (results) => {
            opened.waiters.forEach((waiter, index) =>
              waiter.resolve((results as readonly unknown[])[index]),
            );
          },
          reject: (error) => {
            if (this.openGroups.get(key) === opened) this.openGroups.delete(key);
            for (const waiter of opened.waiters) waiter.reject(error);
          },
          callers: () => opened.items.length,
        });
        this.schedule();
      }
      group.items.push(item);
      group.waiters.push({ resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * Calls `listener` after every committed batch (e.g. to wake the outbox relay, since a
   * batch usually wrote outbox rows). Returns a function that removes it.
   */
  onCommit(listener: (batch: CommittedBatch) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** Stops taking units; waits for the queued and running ones to finish. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.queue.length > 0 || this.running.size > 0) {
      this.flush(true);
      await Promise.allSettled([...this.running]);
    }
    this.clearTimers();
  }

  private schedule(): void {
    if (this.inFlight === 0) {
      // Idle: start at once, but let the callers of this same tick join the batch.
      this.immediate ??= setImmediate(() => {
        this.immediate = undefined;
        this.flush(false);
      });
      return;
    }
    if (this.queue.length >= this.maxBatchSize) this.flush(false);
    else this.armTimer();
  }

  private armTimer(): void {
    if (this.timer !== undefined || this.queue.length === 0) return;
    const oldest = this.queue[0];
    const waited = oldest === undefined ? 0 : performance.now() - oldest.enqueuedAt;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.flush(false);
      },
      Math.max(0, this.maxDelayMs - waited),
    );
  }

  private clearTimers(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  /** Starts as many batches as are due and allowed. */
  private flush(force: boolean): void {
    while (this.queue.length > 0 && this.inFlight < this.maxConcurrent) {
      const oldest = this.queue[0];
      const due =
        force ||
        this.inFlight === 0 ||
        this.queue.length >= this.maxBatchSize ||
        (oldest !== undefined && performance.now() - oldest.enqueuedAt >= this.maxDelayMs);
      if (!due) break;
      const units = this.queue.splice(0, this.maxBatchSize);
      this.start(units);
    }
    if (this.queue.length > 0 && this.inFlight < this.maxConcurrent) this.armTimer();
  }

  private start(units: Unit[]): void {
    this.inFlight++;
    this.counters.batches++;
    this.counters.units += units.length;
    this.counters.largestBatch = Math.max(this.counters.largestBatch, units.length);
    const batch = runBatch(this.pool, units, (callers) => {
      const committed: CommittedBatch = { units: callers };
      for (const listener of this.commitListeners) listener(committed);
    }).finally(() => {
      this.inFlight--;
      this.running.delete(batch);
      if (this.timer !== undefined) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
      this.flush(this.closed);
    });
    this.running.add(batch);
  }
}

/**
 * Optional injection token of the TransactionBatcherOptions (provide it from a global
 * module to tune the batcher; defaults otherwise).
 */
export const TRANSACTION_BATCHER_OPTIONS = Symbol('TRANSACTION_BATCHER_OPTIONS');

/**
 * One TransactionBatcher per application on the DataSource's pool, shared by every module
 * that imports this one (the order handlers and the dead-letter sink). Closed (after
 * running what is queued) at application shutdown.
 */
@Module({
  providers: [
    Database,
    {
      provide: TransactionBatcher,
      inject: [Database, { token: TRANSACTION_BATCHER_OPTIONS, optional: true }],
      useFactory: (database: Database, options: TransactionBatcherOptions | undefined) =>
        new TransactionBatcher(database.pool, options ?? {}),
    },
  ],
  exports: [TransactionBatcher],
})
export class TransactionBatcherModule implements OnApplicationShutdown {
  constructor(@Inject(TransactionBatcher) private readonly batcher: TransactionBatcher) {}

  async onApplicationShutdown(): Promise<void> {
    await this.batcher.close();
  }
}
