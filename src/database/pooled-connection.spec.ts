import { afterEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import {
  errorMessage,
  FakePostgres,
  readyMessages,
  type FakeSession,
} from '../../test/support/fake-postgres.js';
import { AppError } from '../errors/app-error.js';
import {
  checkOut,
  DatabaseUnavailableError,
  guardPool,
  GuardedClient,
  isLostConnection,
  unavailableOr,
} from './pooled-connection.js';

/** One of our own errors whose message quotes another service's socket error. */
class OtherServiceError extends AppError {
  readonly code = 'OTHER.NETWORK';
  readonly transient = true;
}

/** What a session ended by Postgres fails with. */
const TERMINATED = /terminating connection due to administrator command/;

let server: FakePostgres | undefined;
const pools: pg.Pool[] = [];

function poolOn(fake: FakePostgres, options: Partial<pg.PoolConfig> = {}): pg.Pool {
  const pool = new pg.Pool({
    host: '127.0.0.1',
    port: fake.port,
    user: 'postgres',
    database: 'postgres',
    max: 2,
    ...options,
  });
  pools.push(pool);
  return pool;
}

function lastSession(fake: FakePostgres): FakeSession {
  const session = fake.sessions.at(-1);
  if (session === undefined) throw new Error('no session yet');
  return session;
}

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end().catch(() => undefined);
  await server?.close();
  server = undefined;
});

function errorWith(message: string, code?: string): Error {
  return code === undefined ? new Error(message) : Object.assign(new Error(message), { code });
}

describe('isLostConnection', () => {
  it.each([
    ['57P01', 'terminating connection due to administrator command'],
    ['57P03', 'the database system is starting up'],
    ['08006', 'connection failure'],
    ['ECONNRESET', 'read ECONNRESET'],
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'],
    ['EPIPE', 'write EPIPE'],
    [undefined, 'Connection terminated unexpectedly'],
    [undefined, 'Client has encountered a connection error and is not queryable'],
  ])('is true for %s (%s)', (code, message) => {
    expect(isLostConnection(errorWith(message, code))).toBe(true);
  });

  it.each([
    ['23505', 'duplicate key value violates unique constraint'],
    ['40001', 'could not serialize access due to concurrent update'],
    ['57014', 'canceling statement due to statement timeout'],
    [undefined, 'a unit failed'],
  ])('is false for %s (%s)', (code, message) => {
    expect(isLostConnection(errorWith(message, code))).toBe(false);
  });

  it('is false for our own errors, even one quoting a socket error, and for non-errors', () => {
    expect(isLostConnection(new OtherServiceError('read ECONNRESET'))).toBe(false);
    expect(isLostConnection('read ECONNRESET')).toBe(false);
  });
});

describe('unavailableOr', () => {
  it('turns a lost or refused connection into DatabaseUnavailableError, keeping the cause', () => {
    const refused = errorWith('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED');
    const error = unavailableOr(refused);
    expect(error).toBeInstanceOf(DatabaseUnavailableError);
    expect(error).toMatchObject({ transient: true, waitsForOther: true, cause: refused });
    expect((error as Error).message).toBe(
      'Postgres is out of reach: Error ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432',
    );
  });

  it('leaves any other error as it is, our own ones included', () => {
    const duplicate = errorWith('duplicate key value', '23505');
    const payflow = new OtherServiceError('read ECONNRESET');
    expect(unavailableOr(duplicate)).toBe(duplicate);
    expect(unavailableOr(payflow)).toBe(payflow);
    expect(unavailableOr('text')).toBe('text');
  });
});

describe('GuardedClient', () => {
  it('listens for errors at the moment pg-pool hands a new client out, where pg.Client does not', async () => {
    server = await FakePostgres.start();
    const heard = async (pool: pg.Pool): Promise<number> =>
      new Promise((resolve, reject) => {
        // The callback runs synchronously in pg-pool's hand-over, before any caller's code.
        pool.connect((error, client, done) => {
          if (error !== undefined || client === undefined) {
            reject(error ?? new Error('no client'));
            return;
          }
          const count = client.listenerCount('error');
          done();
          resolve(count);
        });
      });
    expect(await heard(poolOn(server))).toBe(0);
    expect(await heard(poolOn(server, { Client: GuardedClient }))).toBe(1);
  });

  it('survives a new connection that Postgres ends in the same read that opened it', async () => {
    // A busy worker reads "ready" and the 57P01 of a restart together: pg emits the error
    // right after pg-pool took its listener off, before the caller could add one.
    server = await FakePostgres.start((session) =>
      session.write(Buffer.concat([readyMessages(), errorMessage()])),
    );
    const pool = poolOn(server, { Client: GuardedClient });
    pool.on('error', () => undefined);
    const client = await pool.connect();
    await expect(client.query('SELECT 1')).rejects.toThrow(/not queryable|terminated/i);
    client.release();
    // Not queryable: pg-pool discards it rather than handing it out again.
    await until(() => pool.totalCount === 0);
  });
});

describe('guardPool', () => {
  it('hears the loss of an idle client once per pool, however often it is guarded', async () => {
    server = await FakePostgres.start();
    const pool = poolOn(server);
    const lost: Error[] = [];
    guardPool(pool, (error) => lost.push(error));
    guardPool(pool, () => {
      throw new Error('a second guard must not be added');
    });
    expect(pool.listenerCount('error')).toBe(1);

    const client = await pool.connect();
    client.release();
    lastSession(server).terminate();
    await until(() => lost.length > 0);
    expect(lost[0]?.message).toMatch(TERMINATED);
    expect((lost[0] as Error & { code?: string }).code).toBe('57P01');
    await until(() => pool.totalCount === 0);
  });
});

describe('checkOut', () => {
  it('hears a held connection die between two statements, once, and destroys it on release', async () => {
    server = await FakePostgres.start();
    const pool = poolOn(server);
    guardPool(pool);
    const lost: Error[] = [];
    const held = await checkOut(pool, { onLost: (error) => lost.push(error) });
    await held.client.query('SELECT 1');

    // 57P01 first, then the socket's end: pg emits 'error' for each.
    lastSession(server).terminate();
    await until(() => held.lost !== undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(lost).toHaveLength(1);
    expect(held.lost?.message).toMatch(TERMINATED);
    await expect(held.client.query('SELECT 1')).rejects.toThrow();

    held.release();
    held.release();
    await until(() => pool.totalCount === 0);
  });

  it('counts a statement that failed with a connection error as a loss, and no other error', async () => {
    server = await FakePostgres.start();
    const pool = poolOn(server);
    const lost: Error[] = [];
    const held = await checkOut(pool, { onLost: (error) => lost.push(error) });

    held.failed(Object.assign(new Error('duplicate key'), { code: '23505' }));
    held.failed('not even an error');
    // Another service's socket error, reported through one of our own errors.
    held.failed(new OtherServiceError('read ECONNRESET'));
    expect(held.lost).toBeUndefined();

    const terminated = Object.assign(new Error('terminating connection'), { code: '57P01' });
    held.failed(terminated);
    expect(held.lost).toBe(terminated);
    expect(lost).toEqual([terminated]);

    held.release();
    // Lost: destroyed, not pooled again.
    await until(() => pool.totalCount === 0);
  });

  it('gives a sound connection back to the pool, without its listener', async () => {
    server = await FakePostgres.start();
    const pool = poolOn(server);
    const held = await checkOut(pool);
    const client = held.client;
    // A plain pg.Client: while held, checkOut's listener is its only one.
    const [ours] = client.listeners('error');
    expect(client.listenerCount('error')).toBe(1);
    held.release();
    expect(pool.idleCount).toBe(1);
    // pg-pool's idle listener is back on; checkOut's is gone.
    expect(client.listenerCount('error')).toBe(1);
    expect(client.listeners('error')).not.toContain(ours);
  });

  it('destroys a sound connection when told to (its session locks go with it)', async () => {
    server = await FakePostgres.start();
    const pool = poolOn(server);
    const held = await checkOut(pool);
    held.release(new Error('give the locks back'));
    await until(() => pool.totalCount === 0);
  });
});
