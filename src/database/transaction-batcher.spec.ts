import { EventEmitter } from 'node:events';
import { describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import {
  TransactionBatchError,
  TransactionBatcher,
  TransactionBatcherClosedError,
  type PoolLike,
} from './transaction-batcher.js';

/** A pool whose clients record statements; `gate` holds COMMITs until released. */
class FakePool implements PoolLike {
  readonly log: string[][] = [];
  failCommit = false;
  /** Postgres out of reach: connect() fails with this. */
  connectError: Error | undefined;
  gate: Promise<void> | undefined;
  connects = 0;
  /** What each client was released with (pg-pool discards a client released with an error). */
  readonly released: unknown[] = [];

  connect(): Promise<pg.PoolClient> {
    this.connects += 1;
    if (this.connectError !== undefined) return Promise.reject(this.connectError);
    const statements: string[] = [];
    this.log.push(statements);
    // Like pg's clients, an EventEmitter: a dead connection emits 'error' even between
    // statements, when no query is there to reject.
    let dead = false;
    const client = new EventEmitter();
    Object.assign(client, {
      query: async (query: string | pg.QueryConfig) => {
        const text = typeof query === 'string' ? query : query.text;
        if (dead) throw new Error('Client was closed and is not queryable');
        statements.push(text);
        if (text === 'die') {
          // The server goes away after answering: the client is idle when it notices.
          setImmediate(() => {
            dead = true;
            client.emit('error', new Error('Connection terminated unexpectedly'));
          });
        }
        if (text === 'COMMIT') {
          if (this.gate) await this.gate;
          if (this.failCommit) throw new Error('could not serialize');
        }
        if (text.startsWith('fail')) throw new Error(`statement failed: ${text}`);
        return { rows: [{ text }], rowCount: 1 };
      },
      release: (error?: unknown) => {
        this.released.push(error);
      },
    });
    return Promise.resolve(client as unknown as pg.PoolClient);
  }
}

const unit = (text: string) => async (tx: { query: (t: string) => Promise<unknown[]> }) => {
  await tx.query(text);
  return text;
};

describe('TransactionBatcher', () => {
  it('runs the units of one tick in one transaction, without savepoints while all succeed', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool);
    const results = await Promise.all([batcher.run(unit('a')), batcher.run(unit('b'))]);
    expect(results).toEqual(['a', 'b']);
    expect(pool.log).toEqual([['BEGIN', 'a', 'b', 'COMMIT']]);
    expect(batcher.stats).toEqual({ batches: 1, units: 2, largestBatch: 2 });
  });

  it('rolls back and rejects only the unit that failed', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool);
    const outcomes = await Promise.allSettled([
      batcher.run(unit('a')),
      batcher.run(unit('fail b')),
      batcher.run(unit('c')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    // First without savepoints; the failure rolls back and reruns with one per unit.
    expect(pool.log[0]).toEqual([
      'BEGIN',
      'a',
      'fail b',
      'ROLLBACK',
      'BEGIN; SAVEPOINT unit',
      'a',
      'RELEASE SAVEPOINT unit; SAVEPOINT unit',
      'fail b',
      'ROLLBACK TO SAVEPOINT unit',
      'c',
      'COMMIT',
    ]);
  });

  it('needs no rerun for a unit that fails before any statement, nor for a single unit', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool);
    const outcomes = await Promise.allSettled([
      batcher.run(unit('a')),
      batcher.run(() => Promise.reject(new Error('mapping failed'))),
      batcher.run(unit('c')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(pool.log[0]).toEqual(['BEGIN', 'a', 'c', 'COMMIT']);
    await expect(batcher.run(unit('fail alone'))).rejects.toThrow(/statement failed/);
    expect(pool.log[1]).toEqual(['BEGIN', 'fail alone', 'ROLLBACK']);
  });

  it('handles the items of one key with one grouped unit, and hands each caller its result', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool);
    const key = {};
    const seen: (readonly string[])[] = [];
    const grouped = (item: string) =>
      batcher.runGrouped(key, item, async (tx, items) => {
        seen.push(items);
        await tx.query(`many ${items.join(',')}`);
        return items.map((text) => text.toUpperCase());
      });
    const results = await Promise.all([grouped('a'), batcher.run(unit('x')), grouped('b')]);
    expect(results).toEqual(['A', 'x', 'B']);
    expect(seen).toEqual([['a', 'b']]);
    expect(pool.log).toEqual([['BEGIN', 'many a,b', 'x', 'COMMIT']]);
  });

  it('rejects every caller of a grouped unit that failed, and starts a new group after it', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool, { maxGroupSize: 2 });
    const key = {};
    const grouped = (item: string) =>
      batcher.runGrouped(key, item, async (tx, items) => {
        await tx.query(items.includes('bad') ? 'fail many' : `many ${items.join(',')}`);
        return items;
      });
    const outcomes = await Promise.allSettled([grouped('bad'), grouped('b'), grouped('c')]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    await expect(grouped('d')).resolves.toBe('d');
  });

  it('rejects every unit when the COMMIT fails (a failed unit keeps its own error)', async () => {
    const pool = new FakePool();
    pool.failCommit = true;
    const batcher = new TransactionBatcher(pool);
    const [ok, failed] = await Promise.allSettled([
      batcher.run(unit('a')),
      batcher.run(unit('fail b')),
    ]);
    expect(ok.status === 'rejected' && ok.reason).toBeInstanceOf(TransactionBatchError);
    expect(ok.status === 'rejected' && (ok.reason as TransactionBatchError).transient).toBe(true);
    // A failed COMMIT on a live connection is a failed try, not a wait for the database.
    expect(ok.status === 'rejected' && (ok.reason as TransactionBatchError).waitsForOther).toBe(
      false,
    );
    expect(failed.status === 'rejected' && String(failed.reason)).toMatch(/statement failed/);
    expect(pool.log[0]?.at(-1)).toBe('ROLLBACK');
  });

  it('fails the batch and discards the client when its connection dies, with no unhandled error', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool, { maxDelayMs: 0 });
    const dies = async (tx: { query: (t: string) => Promise<unknown[]> }) => {
      await tx.query('die');
      await new Promise((resolve) => setTimeout(resolve, 5));
      return tx.query('after');
    };
    const results = await Promise.allSettled([batcher.run(unit('a')), batcher.run(dies)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    const [first] = results;
    expect(first?.status === 'rejected' && first.reason).toBeInstanceOf(TransactionBatchError);
    expect(
      first?.status === 'rejected' && (first.reason as TransactionBatchError).waitsForOther,
    ).toBe(true);
    expect(pool.released[0]).toEqual(new Error('Connection terminated unexpectedly'));
    await expect(batcher.run(unit('b'))).resolves.toBe('b');
    expect(pool.released[1]).toBeUndefined();
  });

  it('rejects every unit as waiting for the database while Postgres cannot be reached', async () => {
    const pool = new FakePool();
    pool.connectError = Object.assign(new Error('the database system is shutting down'), {
      code: '57P03',
    });
    const batcher = new TransactionBatcher(pool);
    const outcomes = await Promise.allSettled([batcher.run(unit('a')), batcher.run(unit('b'))]);
    for (const outcome of outcomes) {
      expect(outcome.status === 'rejected' && outcome.reason).toBeInstanceOf(TransactionBatchError);
      // Retried at the first back-off step, spending no attempt (failure-policy.ts).
      const error =
        outcome.status === 'rejected' ? (outcome.reason as TransactionBatchError) : null;
      expect(error?.waitsForOther).toBe(true);
      expect(error?.transient).toBe(true);
    }

    pool.connectError = undefined;
    await expect(batcher.run(unit('c'))).resolves.toBe('c');
  });

  it('splits at maxBatchSize', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool, { maxBatchSize: 2, maxConcurrentBatches: 4 });
    await Promise.all(['a', 'b', 'c', 'd', 'e'].map((text) => batcher.run(unit(text))));
    expect(pool.log.map((statements) => statements.filter((s) => s.length === 1))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e'],
    ]);
  });

  it('queues units while batches run and sends them together next', async () => {
    const pool = new FakePool();
    let open!: () => void;
    pool.gate = new Promise<void>((resolve) => (open = resolve));
    const batcher = new TransactionBatcher(pool, { maxConcurrentBatches: 1, maxDelayMs: 0 });
    const first = batcher.run(unit('a'));
    await new Promise((resolve) => setImmediate(resolve));
    const later = ['b', 'c', 'd'].map((text) => batcher.run(unit(text)));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(pool.connects).toBe(1);
    pool.gate = undefined;
    open();
    await Promise.all([first, ...later]);
    expect(pool.log.map((statements) => statements.filter((s) => s.length === 1))).toEqual([
      ['a'],
      ['b', 'c', 'd'],
    ]);
  });

  it('writes the deferred rows of the units that succeeded once, before the COMMIT', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool);
    const key = {};
    const flushed: string[][] = [];
    const flush = async (tx: { query: (t: string) => Promise<unknown[]> }, items: string[]) => {
      flushed.push(items);
      await tx.query('flush');
    };
    const outcomes = await Promise.allSettled(
      ['a', 'fail b', 'c'].map((text) =>
        batcher.run(async (tx) => {
          tx.defer(key, [`${text}-1`, `${text}-2`], flush);
          await tx.query(text);
        }),
      ),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(flushed).toEqual([['a-1', 'a-2', 'c-1', 'c-2']]);
    expect(pool.log[0]?.slice(-2)).toEqual(['flush', 'COMMIT']);
  });

  it('rejects the whole batch when a deferred write fails', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool);
    const outcomes = await Promise.allSettled(
      ['a', 'b'].map((text) =>
        batcher.run(async (tx) => {
          tx.defer(tx, [text], () => Promise.reject(new Error('flush failed')));
          await tx.query(text);
        }),
      ),
    );
    for (const outcome of outcomes) {
      expect(outcome.status === 'rejected' && outcome.reason).toBeInstanceOf(TransactionBatchError);
    }
    expect(pool.log[0]?.at(-1)).toBe('ROLLBACK');
  });

  it('refuses a unit that uses its transaction after it ended', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool);
    let leaked: { query: (t: string) => Promise<unknown[]> } | undefined;
    await batcher.run((tx) => {
      leaked = tx;
      return Promise.resolve();
    });
    await expect(leaked?.query('late')).rejects.toThrow(/after it ended/);
  });

  it('finishes queued units on close and refuses new ones', async () => {
    const pool = new FakePool();
    const batcher = new TransactionBatcher(pool);
    const pending = batcher.run(unit('a'));
    await batcher.close();
    await expect(pending).resolves.toBe('a');
    await expect(batcher.run(unit('b'))).rejects.toBeInstanceOf(TransactionBatcherClosedError);
  });
});
