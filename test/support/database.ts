/**
 * Test databases: one template database is built from the migrations, and every test file
 * gets its own copy of it (CREATE DATABASE … TEMPLATE), so files never share state and
 * nothing is ever built by `synchronize`.
 *
 * The template is (re)built by the first test file that finds it missing or stale, under a
 * Postgres advisory lock so that parallel jest workers build it once. Stale means the
 * migrations' fingerprint (their names and the source of their up()) changed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { MIGRATIONS } from '../../migrations/index.js';
import pg from 'pg';
import { createDataSource, runMigrations } from '../../src/database/data-source.js';

/** Server to test against; the database name part of the URL is ignored. */
export const TEST_DATABASE_SERVER =
  process.env.TEST_DATABASE_SERVER ?? 'postgres://postgres@127.0.0.1:5432';
export const TEMPLATE_DATABASE = 'payflow_bridge_test_template';

/** Refuses any database whose name does not say "test", whatever the caller asks. */
export function assertTestDatabaseName(name: string): void {
  if (!/test/i.test(name)) {
    throw new Error(`refusing to touch database "${name}": its name does not contain "test"`);
  }
  if (!/^[a-z0-9_]+$/.test(name)) {
    throw new Error(`refusing database name "${name}": only a-z, 0-9 and _ are allowed`);
  }
}

export function databaseUrl(name: string): string {
  assertTestDatabaseName(name);
  return `${TEST_DATABASE_SERVER}/${name}`;
}

/** Runs `work` on a connection to the server's `postgres` database, closed afterwards. */
export async function withAdminClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: `${TEST_DATABASE_SERVER}/postgres` });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  assertTestDatabaseName(name);
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

const TEMPLATE_LOCK_KEY = 7_447_001;

function migrationsFingerprint(): string {
  const hash = createHash('sha256');
  for (const migration of MIGRATIONS) {
    const up: unknown = Reflect.get(migration.prototype, 'up');
    hash.update(migration.name).update(String(up));
  }
  return hash.digest('hex').slice(0, 32);
}

/** Makes sure the template database exists and matches the current migrations. */
export async function ensureTemplateDatabase(): Promise<void> {
  const fingerprint = migrationsFingerprint();
  await withAdminClient(async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      const { rows } = await client.query<{ comment: string | null }>(
        `SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
        [TEMPLATE_DATABASE],
      );
      if (rows[0]?.comment !== fingerprint) {
        await buildTemplateDatabase(client, fingerprint);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  });
}

async function buildTemplateDatabase(client: pg.Client, fingerprint: string): Promise<void> {
  await client.query(`UPDATE pg_database SET datistemplate = false WHERE datname = $1`, [
    TEMPLATE_DATABASE,
  ]);
  await dropDatabase(client, TEMPLATE_DATABASE);
  await client.query(`CREATE DATABASE "${TEMPLATE_DATABASE}"`);
  const dataSource = createDataSource({ url: databaseUrl(TEMPLATE_DATABASE), poolSize: 1 });
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
  await client.query(`COMMENT ON DATABASE "${TEMPLATE_DATABASE}" IS '${fingerprint}'`);
  await client.query(`UPDATE pg_database SET datistemplate = true WHERE datname = $1`, [
    TEMPLATE_DATABASE,
  ]);
}

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh database for one test file, copied from the migrated template. */
export async function createTestDatabase(label = 'file'): Promise<TestDatabase> {
  const safeLabel = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 30);
  const name = `pfb_test_${safeLabel}_${randomBytes(4).toString('hex')}`;
  assertTestDatabaseName(name);
  await ensureTemplateDatabase();
  await withAdminClient(async (client) => {
    await client.query(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DATABASE}"`);
  });
  return {
    name,
    url: databaseUrl(name),
    drop: () => withAdminClient((client) => dropDatabase(client, name)),
  };
}

/**
 * A plain pg pool for a test's own queries. pg-pool's end() resolves before its clients'
 * sockets have closed, so the DROP DATABASE … WITH (FORCE) that follows can reach a
 * closing client as a FATAL message, which the pool re-emits as 'error': without a
 * listener that is an unhandled error failing whatever test runs then. Errors of idle
 * clients are ignored here; a test sees a real failure through its queries.
 */
export function openTestPool(url: string, max = 2): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on('error', () => undefined);
  return pool;
}
