/**
 * TransactionBatcher against a real Postgres: group commit (many units, few transactions),
 * savepoint isolation of a failing unit, and a failed COMMIT rejecting the whole batch.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  TransactionBatchError,
  TransactionBatcher,
} from '../../src/database/transaction-batcher.js';
import { openTestPool, createTestDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase('batcher');
  pool = openTestPool(database.url, 6);
  await pool.query(`CREATE TABLE batch_items (id int PRIMARY KEY, note text)`);
  await pool.query(
    `CREATE TABLE batch_deferred (id int, CONSTRAINT batch_deferred_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)`,
  );
});

afterAll(async () => {
  await pool.end();
  await database.drop();
});

async function ids(table: string): Promise<number[]> {
  const { rows } = await pool.query<{ id: number }>(`SELECT id FROM ${table} ORDER BY id`);
  return rows.map((row) => row.id);
}

const insert =
  (id: number) =>
  async (tx: {
    query: <R extends object>(text: string, params?: readonly unknown[]) => Promise<R[]>;
  }) => {
    const [row] = await tx.query<{ txid: string }>(
      `WITH i AS (INSERT INTO batch_items (id) VALUES ($1)) SELECT txid_current()::text AS txid`,
      [id],
    );
    return row!.txid;
  };

describe('TransactionBatcher on Postgres', () => {
  it('commits concurrent units together in few transactions', async () => {
    const batcher = new TransactionBatcher(pool, { maxBatchSize: 64, maxConcurrentBatches: 2 });
    const units = Array.from({ length: 500 }, (_, index) => batcher.run(insert(index + 1)));
    const txids = await Promise.all(units);
    expect(await ids('batch_items')).toHaveLength(500);
    const transactions = new Set(txids).size;
    expect(transactions).toBeLessThanOrEqual(batcher.stats.batches);
    expect(transactions).toBeLessThan(50);
    expect(batcher.stats.largestBatch).toBeLessThanOrEqual(64);
    await batcher.close();
    await pool.query(`TRUNCATE batch_items`);
  });

  it('rolls back only the unit that failed, and rejects only its caller', async () => {
    const batcher = new TransactionBatcher(pool);
    const thrown = new Error('unit 2 gives up');
    const outcomes = await Promise.allSettled([
      batcher.run(insert(1)),
      batcher.run(async (tx) => {
        await tx.execute(`INSERT INTO batch_items (id) VALUES (2)`);
        throw thrown;
      }),
      batcher.run(async (tx) => {
        await tx.execute(`INSERT INTO batch_items (id) VALUES (3)`);
        await tx.execute(`INSERT INTO batch_items (id) VALUES (1)`); // unique violation
      }),
      batcher.run(insert(4)),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect(outcomes[1]).toEqual({ status: 'rejected', reason: thrown });
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/duplicate key/);
    const [first, , , last] = outcomes;
    expect((first as PromiseFulfilledResult<string>).value).toBe(
      (last as PromiseFulfilledResult<string>).value,
    );
    expect(await ids('batch_items')).toEqual([1, 4]);
    await batcher.close();
    await pool.query(`TRUNCATE batch_items`);
  });

  it('rejects every unit of a batch whose COMMIT fails, storing none of them', async () => {
    const batcher = new TransactionBatcher(pool);
    const outcomes = await Promise.allSettled([
      batcher.run(insert(10)),
      batcher.run((tx) => tx.execute(`INSERT INTO batch_deferred (id) VALUES (7)`)),
      batcher.run((tx) => tx.execute(`INSERT INTO batch_deferred (id) VALUES (7)`)),
    ]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as TransactionBatchError;
      expect(reason).toBeInstanceOf(TransactionBatchError);
      expect(reason.transient).toBe(true);
    }
    expect(await ids('batch_items')).toEqual([]);
    expect(await ids('batch_deferred')).toEqual([]);
    // The batcher goes on working after a failed batch.
    await expect(batcher.run(insert(11))).resolves.toMatch(/^\d+$/);
    expect(await ids('batch_items')).toEqual([11]);
    await batcher.close();
  });

  it('runAlone commits one statement on its own, each caller answered at its own commit', async () => {
    await pool.query(`TRUNCATE batch_items`);
    const batcher = new TransactionBatcher(pool);
    const rows = await Promise.all(
      [21, 22, 23].map((id) =>
        batcher.runAlone<{ id: number; txid: string }>(
          `INSERT INTO batch_items (id) VALUES ($1) RETURNING id, txid_current()::text AS txid`,
          [id],
        ),
      ),
    );
    expect(rows.map(([row]) => row?.id)).toEqual([21, 22, 23]);
    // Three transactions, not one batch.
    expect(new Set(rows.map(([row]) => row?.txid)).size).toBe(3);
    await expect(
      batcher.runAlone(`INSERT INTO batch_items (id) VALUES ($1)`, [21]),
    ).rejects.toThrow(/duplicate key/);
    expect(await ids('batch_items')).toEqual([21, 22, 23]);
    await batcher.close();
    await expect(batcher.runAlone('SELECT 1', [])).rejects.toThrow(/closed/);
    await pool.query(`TRUNCATE batch_items`);
  });
});
