import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { MIGRATIONS } from '../../migrations/index.js';
import {
  assertTestDatabaseName,
  createTestDatabase,
  type TestDatabase,
} from '../support/database.js';

describe('test databases', () => {
  let database: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    database = await createTestDatabase('migrations');
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });

  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  it('are built by every migration, in order', async () => {
    const { rows } = await client.query<{ name: string }>(
      'SELECT name FROM migrations ORDER BY id',
    );
    expect(rows.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
  });

  it('hold the tracking tables', async () => {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    );
    expect(rows.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(['orders', 'payments', 'installments']),
    );
  });

  it('are separate per test file', async () => {
    const other = await createTestDatabase('migrations');
    try {
      expect(other.name).not.toBe(database.name);
      await client.query(`INSERT INTO orders (order_id) VALUES ('SO-1')`);
      const otherClient = new pg.Client({ connectionString: other.url });
      await otherClient.connect();
      const { rows } = await otherClient.query('SELECT * FROM orders');
      await otherClient.end();
      expect(rows).toHaveLength(0);
    } finally {
      await other.drop();
    }
  });

  it('refuse a database whose name does not say test', () => {
    expect(() => assertTestDatabaseName('payflow_bridge')).toThrow(/does not contain "test"/);
    expect(() => assertTestDatabaseName('payflow_bridge_test')).not.toThrow();
  });
});
