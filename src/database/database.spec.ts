import { afterEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { capturingLogger } from '../../test/support/capturing-logger.js';
import { FakePostgres } from '../../test/support/fake-postgres.js';
import { Database } from './database.js';
import { DatabaseUnavailableError, GuardedClient } from './pooled-connection.js';

let server: FakePostgres | undefined;
const pools: pg.Pool[] = [];

afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end().catch(() => undefined);
  await server?.close();
  server = undefined;
});

/** A Database over a pool on `port`, as TypeORM would hand it over (driver.master). */
function databaseOn(port: number, logger = capturingLogger().logger): Database {
  const pool = new pg.Pool({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    max: 2,
    Client: GuardedClient,
  });
  pools.push(pool);
  return new Database({ driver: { master: pool } } as unknown as DataSource, logger);
}

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('Database while Postgres is away', () => {
  it('fails a statement with DatabaseUnavailableError, a wait rather than a failed try', async () => {
    server = await FakePostgres.start();
    const { port } = server;
    await server.close();
    server = undefined;
    const database = databaseOn(port);

    const failure: unknown = await database.sql.query('SELECT 1').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DatabaseUnavailableError);
    expect(failure).toMatchObject({
      code: 'DATABASE.UNAVAILABLE',
      transient: true,
      waitsForOther: true,
    });
    await expect(database.transaction((tx) => tx.query('SELECT 1'))).rejects.toBeInstanceOf(
      DatabaseUnavailableError,
    );
  });

  it('fails a transaction whose connection is ended under it, and never reuses that connection', async () => {
    server = await FakePostgres.start();
    const fake = server;
    const database = databaseOn(fake.port);
    const outcome = database.transaction(async (tx) => {
      await tx.query('SELECT 1');
      fake.sessions.at(-1)?.terminate();
      await new Promise((resolve) => setTimeout(resolve, 50));
      return tx.query('SELECT 2');
    });
    await expect(outcome).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await until(() => database.pool.totalCount === 0);
    // The next transaction gets a new connection and succeeds.
    await expect(database.transaction((tx) => tx.query('SELECT 3'))).resolves.toEqual([]);
    expect(fake.sessions).toHaveLength(2);
  });

  it('tells of idle connections lost once per burst, not once per connection', async () => {
    server = await FakePostgres.start();
    const fake = server;
    const logs = capturingLogger();
    const database = databaseOn(fake.port, logs.logger);
    const [a, b] = await Promise.all([database.pool.connect(), database.pool.connect()]);
    a.release();
    b.release();
    for (const session of fake.sessions) session.terminate();
    await until(() => database.pool.totalCount === 0);
    const warnings = logs.lines.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/lost while idle/);
    expect(String(warnings[0]?.error)).toMatch(/57P01/);
  });
});
