/**
 * One batch of the transaction batcher, on one pooled connection: the units run one after
 * the other in one transaction, without savepoints first; when a unit fails after it ran a
 * statement, the transaction is rolled back and run again with a SAVEPOINT per unit, so
 * that only that unit's writes are undone. Then the deferred writes of the units that
 * succeeded are flushed (one call per key) and the transaction commits. Each unit's
 * promise settles after the COMMIT (TransactionBatcher decides which units run together).
 */
import pg from 'pg';
import { AppError } from '../errors/app-error.js';
import type { Sql } from './database.js';
import {
  checkOut,
  isLostConnection,
  type HeldConnection,
  type PoolLike,
} from './pooled-connection.js';
import { sqlOn } from './prepared-sql.js';

export type { PoolLike } from './pooled-connection.js';

/** The whole batch failed (COMMIT or connection): nothing of the unit was stored. */
export class TransactionBatchError extends AppError {
  readonly code = 'DATABASE.BATCH_FAILED';
  readonly transient = true;
  /**
   * Postgres was out of reach or the connection was lost (a restart, a failover): the
   * event waits for the database, which comes back by itself, rather than failing. It is
   * retried at the first back-off step without spending its attempts (within its duration
   * budget), so that the events that waited go on within a second of Postgres being back,
   * not after a back-off that grew through the outage.
   */
  override readonly waitsForOther: boolean;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.waitsForOther = isLostConnection(options.cause);
  }
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

export type Work<T> = (tx: BatchSql) => Promise<T>;

interface Deferred {
  readonly key: object;
  readonly items: readonly unknown[];
  readonly flush: (tx: Sql, items: unknown[]) => Promise<void>;
}

export interface BatchUnit {
  readonly work: Work<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** Callers the unit serves (a group serves several). */
  readonly callers: () => number;
}

/** A unit's outcome; `used`: whether it ran any statement (else its savepoint is untouched). */
type Settled =
  | { ok: true; value: unknown; deferred: readonly Deferred[]; used: boolean }
  | { ok: false; error: unknown; used: boolean };

/**
 * Runs `units` as one batch on a connection of `pool` and settles each unit's promise;
 * `onCommitted` hears, right after, how many callers' writes were committed (when any).
 */
export async function runBatch(
  pool: PoolLike,
  units: readonly BatchUnit[],
  onCommitted: (callers: number) => void,
): Promise<void> {
  let settled: Settled[] = [];
  let held: HeldConnection;
  try {
    // Held with a listener for its loss: a connection that dies between two statements
    // (Postgres restarting) fails the batch instead of the process, and is not reused.
    held = await checkOut(pool);
  } catch (error) {
    const failure = batchError(error, 'could not get a database connection');
    for (const unit of units) unit.reject(failure);
    return;
  }
  const { client } = held;
  let broken: unknown;
  try {
    const outcome = await transact(client, units, false, settled);
    if (outcome === 'unit_failed') {
      await client.query('ROLLBACK');
      // One unit alone: its failure is the batch's whole outcome (nothing to commit).
      if (units.length > 1) {
        settled = [];
        await transact(client, units, true, settled);
      }
    }
  } catch (error) {
    broken = error;
    held.failed(error);
    await client.query('ROLLBACK').catch((failure: unknown) => held.failed(failure));
  } finally {
    held.release();
  }
  if (broken !== undefined) {
    // A unit that failed by itself keeps its own error; the others lost their writes.
    // A lost connection is the cause, whatever the statement in progress failed with.
    const error = batchError(held.lost ?? broken, 'the batch transaction failed');
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
  if (committed > 0) onCommitted(committed);
}

/**
 * One transaction over the units, their outcomes pushed to `settled`. Without savepoints
 * it stops at the first unit that failed after running a statement ('unit_failed'; the
 * caller rolls back); with savepoints such a unit is rolled back alone.
 */
async function transact(
  client: pg.PoolClient,
  units: readonly BatchUnit[],
  savepoints: boolean,
  settled: Settled[],
): Promise<'committed' | 'unit_failed'> {
  await client.query(savepoints ? 'BEGIN; SAVEPOINT unit' : 'BEGIN');
  for (let index = 0; index < units.length; index++) {
    const unit = units[index] as BatchUnit;
    const last = index === units.length - 1;
    const result = await runUnit(client, unit);
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
  await flushDeferred(client, settled);
  await client.query('COMMIT');
  return 'committed';
}

async function runUnit(client: pg.PoolClient, unit: BatchUnit): Promise<Settled> {
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
async function flushDeferred(client: pg.PoolClient, settled: readonly Settled[]): Promise<void> {
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

function batchError(cause: unknown, what: string): TransactionBatchError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new TransactionBatchError(`${what}: ${message}`, { cause });
}
