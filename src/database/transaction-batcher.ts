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
 */
import { createHash } from 'node:crypto';
import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { AppError } from '../common/app-error.js';
import { Database, type Sql } from './database.js';

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

/** The whole batch failed (COMMIT or connection): nothing of the unit was stored. */
export class TransactionBatchError extends AppError {
  readonly code = 'DATABASE.BATCH_FAILED';
  readonly transient = true;
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

/** What a unit gets: SQL in its savepoint, and writes deferred to the end of the batch. */
export interface BatchSql extends Sql {
  /**
   * Adds `items` to the batch-wide write named by `key` (any object, compared by identity).
   * Once every unit ran, `flush` is called once per key with the items of the units that
   * succeeded, in unit order (the first unit's `flush` is used). Dropped if this unit fails.
   */
  defer<T>(key: object, items: readonly T[], flush: (tx: Sql, items: T[]) => Promise<void>): void;
}

type Work<T> = (tx: BatchSql) => Promise<T>;

interface Deferred {
  readonly key: object;
  readonly items: readonly unknown[];
  readonly flush: (tx: Sql, items: unknown[]) => Promise<void>;
}

interface Unit {
  readonly work: Work<unknown>;
  readonly enqueuedAt: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Callers the unit serves (a group serves several). */
  readonly callers: () => number;
}

/** A grouped unit still taking items (see `runGrouped`). */
interface OpenGroup {
  readonly items: unknown[];
  readonly waiters: { resolve: (value: unknown) => void; reject: (error: unknown) => void }[];
}

const ONE = (): number => 1;

/** A unit's outcome; `used`: whether it ran any statement (else its savepoint is untouched). */
type Settled =
  | { ok: true; value: unknown; deferred: readonly Deferred[]; used: boolean }
  | { ok: false; error: unknown; used: boolean };

/** What the batcher needs of a pg pool (pg.Pool fits). */
export interface PoolLike {
  connect(): Promise<pg.PoolClient>;
}

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
   */
  async runAlone<R extends pg.QueryResultRow>(
    text: string,
    values: readonly unknown[],
  ): Promise<R[]> {
    if (this.closed) {
      throw new TransactionBatcherClosedError('the transaction batcher is closed');
    }
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      const result = await client.query<R>(text, [...values]);
      return result.rows;
    } catch (error) {
      if (error instanceof Error && isConnectionError(error)) broken = error;
      throw error;
    } finally {
      client.release(broken);
    }
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
    const batch = this.execute(units).finally(() => {
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

  private async execute(units: Unit[]): Promise<void> {
    let settled: Settled[] = [];
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      this.rejectAll(units, error, 'could not get a database connection');
      return;
    }
    let broken: unknown;
    // pg-pool listens for a checked-out client's errors no more: without this, a connection
    // that dies between two statements would be an unhandled 'error' event.
    let lost: Error | undefined;
    const onError = (error: Error): void => {
      lost ??= error;
    };
    client.on('error', onError);
    try {
      const outcome = await this.transact(client, units, false, settled);
      if (outcome === 'unit_failed') {
        await client.query('ROLLBACK');
        // One unit alone: its failure is the batch's whole outcome (nothing to commit).
        if (units.length > 1) {
          settled = [];
          await this.transact(client, units, true, settled);
        }
      }
    } catch (error) {
      broken = error;
      await client.query('ROLLBACK').catch(() => undefined);
    } finally {
      client.release(
        lost ?? (broken instanceof Error && isConnectionError(broken) ? broken : undefined),
      );
      client.off('error', onError);
    }
    if (broken !== undefined) {
      // A unit that failed by itself keeps its own error; the others lost their writes.
      const error = batchError(broken, 'the batch transaction failed');
      units.forEach((unit, index) => {
        const result = settled[index];
        unit.reject(result !== undefined && !result.ok ? result.error : error);
      });
      return;
    }
    units.forEach((unit, index) => {
      const result = settled[index];
      if (result?.ok) unit.resolve(result.value);
      else unit.reject(result?.error);
    });
    let committed = 0;
    units.forEach((unit, index) => {
      if (settled[index]?.ok === true) committed += unit.callers();
    });
    if (committed > 0) {
      const batch: CommittedBatch = { units: committed };
      for (const listener of this.commitListeners) listener(batch);
    }
  }

  /**
   * One transaction over the units, their outcomes pushed to `settled`. Without savepoints
   * it stops at the first unit that failed after running a statement ('unit_failed'; the
   * caller rolls back); with savepoints such a unit is rolled back alone.
   */
  private async transact(
    client: pg.PoolClient,
    units: readonly Unit[],
    savepoints: boolean,
    settled: Settled[],
  ): Promise<'committed' | 'unit_failed'> {
    await client.query(savepoints ? 'BEGIN; SAVEPOINT unit' : 'BEGIN');
    for (let index = 0; index < units.length; index++) {
      const unit = units[index] as Unit;
      const last = index === units.length - 1;
      const result = await this.runUnit(client, unit);
      settled.push(result);
      if (!result.used) {
        // No statement ran: nothing to undo (and the savepoint serves the next unit).
      } else if (!savepoints) {
        if (!result.ok) return 'unit_failed';
      } else if (result.ok) {
        // Keep one savepoint level: release this unit's, open the next one's.
        if (!last) await client.query('RELEASE SAVEPOINT unit; SAVEPOINT unit');
      } else {
        // The savepoint survives ROLLBACK TO and serves the next unit.
        await client.query('ROLLBACK TO SAVEPOINT unit');
      }
    }
    await this.flushDeferred(client, settled);
    await client.query('COMMIT');
    return 'committed';
  }

  private async runUnit(client: pg.PoolClient, unit: Unit): Promise<Settled> {
    let open = true;
    let used = false;
    const deferred: Deferred[] = [];
    const sql = sqlOn(client, () => {
      if (!open) throw new Error('a batched unit used its transaction after it ended');
      used = true;
    });
    const tx: BatchSql = {
      query: (text, params) => sql.query(text, params),
      execute: (text, params) => sql.execute(text, params),
      defer<T>(key: object, items: readonly T[], flush: (tx: Sql, items: T[]) => Promise<void>) {
        if (!open) throw new Error('a batched unit deferred a write after it ended');
        if (items.length === 0) return;
        deferred.push({
          key,
          items,
          flush: flush as (tx: Sql, items: unknown[]) => Promise<void>,
        });
      },
    };
    try {
      const value = await unit.work(tx);
      return { ok: true, value, deferred, used };
    } catch (error) {
      return { ok: false, error, used };
    } finally {
      open = false;
    }
  }

  /** The deferred writes of the units that succeeded: one flush per key. */
  private async flushDeferred(client: pg.PoolClient, settled: readonly Settled[]): Promise<void> {
    const groups = new Map<object, { flush: Deferred['flush']; items: unknown[] }>();
    for (const result of settled) {
      if (!result.ok) continue;
      for (const entry of result.deferred) {
        const group = groups.get(entry.key);
        if (group === undefined)
          groups.set(entry.key, { flush: entry.flush, items: [...entry.items] });
        else group.items.push(...entry.items);
      }
    }
    if (groups.size === 0) return;
    const sql = sqlOn(client, () => undefined);
    for (const { flush, items } of groups.values()) await flush(sql, items);
  }

  private rejectAll(units: readonly Unit[], cause: unknown, what: string): void {
    const error = batchError(cause, what);
    for (const unit of units) unit.reject(error);
  }
}

function batchError(cause: unknown, what: string): TransactionBatchError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new TransactionBatchError(`${what}: ${message}`, { cause });
}

/** Sql on a batch's connection; `check` runs before every statement. */
function sqlOn(client: pg.PoolClient, check: () => void): Sql {
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

/** Errors after which the connection must not go back to the pool. */
function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // Class 08: connection exception; 57P01..57P03: admin shutdown, crash, cannot connect.
    return code.startsWith('08') || code.startsWith('57P');
  }
  return /Connection terminated|ECONNRESET|EPIPE|not queryable/i.test(error.message);
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
