/**
 * Replicas that start together all run the migrations at once (DB_MIGRATE=true). On a fresh
 * database they raced each other ("column … already exists", exit 1); runMigrations now
 * serializes them with a Postgres advisory lock, so every run succeeds and the schema is
 * built exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { MIGRATIONS } from '../../migrations/index.js';
import { createDataSource, runMigrations } from '../../src/database/data-source.js';
import {
  assertTestDatabaseName,
  createTestDatabase,
  databaseUrl,
  withAdminClient,
  type TestDatabase,
} from '../support/database.js';

const RUNS = 6;

async function schemaOf(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ item: string }>(
      `SELECT table_name || '.' || column_name AS item FROM information_schema.columns
        WHERE table_schema = 'public'
       UNION ALL
       SELECT 'index ' || indexname FROM pg_indexes WHERE schemaname = 'public'
       ORDER BY 1`,
    );
    return rows.map((row) => row.item);
  } finally {
    await client.end();
  }
}

describe('migrations run by several replicas at once', () => {
  const name = `pfb_test_migrate_race_${randomBytes(4).toString('hex')}`;
  let template: TestDatabase;

  beforeAll(async () => {
    assertTestDatabaseName(name);
    // The migrated template (and a copy of it, to compare with) is what one run builds.
    template = await createTestDatabase('migrate_race_ref');
    await withAdminClient((client) => client.query(`CREATE DATABASE "${name}"`));
  });

  afterAll(async () => {
    await withAdminClient((client) =>
      client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
    );
    await template.drop();
  });

  it('all succeed on a fresh empty database, and the schema is complete', async () => {
    const sources = Array.from({ length: RUNS }, (_, index) =>
      createDataSource({
        url: databaseUrl(name),
        poolSize: 1,
        applicationName: `migrate-race-${index}`,
      }),
    );
    await Promise.all(sources.map((source) => source.initialize()));
    let results: PromiseSettledResult<string[]>[];
    try {
      results = await Promise.allSettled(sources.map((source) => runMigrations(source)));
    } finally {
      await Promise.all(sources.map((source) => source.destroy()));
    }

    const failures = results.flatMap((result) =>
      result.status === 'rejected' ? [String(result.reason)] : [],
    );
    expect(failures).toEqual([]);
    const ran = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
    // Every migration ran exactly once, in one of the runs; the others found nothing pending.
    expect([...ran].sort()).toEqual(MIGRATIONS.map((migration) => migration.name).sort());

    const client = new pg.Client({ connectionString: databaseUrl(name) });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string }>(
        'SELECT name FROM migrations ORDER BY id',
      );
      expect(rows.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    } finally {
      await client.end();
    }
    expect(await schemaOf(databaseUrl(name))).toEqual(await schemaOf(template.url));
  });
});
