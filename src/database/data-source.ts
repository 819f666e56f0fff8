/**
 * The TypeORM data source. Schema changes only ever come from the migrations in
 * migrations/ (never `synchronize`).
 */
import { DataSource, MigrationExecutor } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import {
  postgresConnection,
  type DatabaseConnectionConfig,
  type PostgresConnection,
} from './connection-options.js';
import { connectionError } from './database-connection.error.js';
import { GuardedClient } from './pooled-connection.js';

/** A table's entity class (a feature's `*.entity.ts`). */
export type EntityClass = new () => object;

/**
 * Where to connect: the configuration (DATABASE_URL, DATABASE_SSL_CA_FILE,
 * DATABASE_PASSWORD), or a bare URL, read as DATABASE_URL alone (tests, tools). Either way
 * the connection is built by connection-options.ts.
 */
export type DatabaseTarget =
  | { readonly database: DatabaseConnectionConfig; readonly url?: never }
  | { readonly url: string; readonly database?: never };

export type DatabaseOptions = DatabaseTarget & {
  poolSize?: number;
  applicationName?: string;
  /**
   * The tables' entities (registered by the feature modules, or src/entities.ts). Only the
   * schema builder (migration:generate) reads them: the code writes plain SQL, so a data
   * source for that alone may omit them.
   */
  entities?: readonly EntityClass[];
};

function connectionOf(target: DatabaseTarget): PostgresConnection {
  return postgresConnection(
    target.database ?? { DATABASE_URL: target.url, DATABASE_SSL_CA_FILE: undefined },
  );
}

function dataSourceFor(connection: PostgresConnection, options: DatabaseOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    // No `url`: pg's parse of it would override these (see connection-options.ts).
    ...(connection.host === undefined ? {} : { host: connection.host }),
    ...(connection.port === undefined ? {} : { port: connection.port }),
    ...(connection.user === undefined ? {} : { username: connection.user }),
    ...(connection.password === undefined ? {} : { password: connection.password }),
    ...(connection.database === undefined ? {} : { database: connection.database }),
    ssl: connection.ssl,
    // Every client of the pool listens for its own 'error' from birth (pooled-connection.ts):
    // a connection that Postgres ends (57P01 at a restart) fails its statement, never the
    // process, whoever holds it and whenever it dies.
    extra: { ...connection.parameters, Client: GuardedClient },
    entities: [...(options.entities ?? [])],
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    poolSize: options.poolSize ?? 20,
    applicationName: options.applicationName ?? 'payflow-bridge',
  });
}

/**
 * A data source, not yet connected (the TypeORM CLI connects it itself). Throws a
 * ConfigError for a DATABASE_URL, sslmode or CA file that cannot be used.
 */
export function createDataSource(options: DatabaseOptions): DataSource {
  return dataSourceFor(connectionOf(options), options);
}

/**
 * A connected data source. A failure to connect is a DatabaseConnectionError whose one-line
 * message says what failed (TLS demanded, password refused, certificate untrusted or for
 * another host), without the URL or the password.
 */
export async function openDataSource(options: DatabaseOptions): Promise<DataSource> {
  const connection = connectionOf(options);
  const dataSource = dataSourceFor(connection, options);
  try {
    await dataSource.initialize();
  } catch (error) {
    if (dataSource.isInitialized) await dataSource.destroy().catch(() => undefined);
    throw connectionError(error, connection);
  }
  return dataSource;
}

/** pg_advisory_lock(namespace, key) held while migrations run ('migr'). */
export const MIGRATION_LOCK = { namespace: 0x6d696772, key: 1 } as const;

/**
 * Runs pending migrations; returns the names of those that ran.
 *
 * Replicas that start together all migrate (DB_MIGRATE): without a lock they read the same
 * pending list and run the same DDL at once (`column … already exists`, and one of them
 * exits). The session advisory lock makes them take turns: the first runs everything, the
 * others wait, then find nothing pending. The lock is taken on the connection the
 * migrations run on (a pool of 1, as `npm run migration:run` uses, would otherwise wait
 * for itself) and is released when that connection ends, also when the process dies.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query('SELECT pg_advisory_lock($1, $2)', [
      MIGRATION_LOCK.namespace,
      MIGRATION_LOCK.key,
    ]);
    try {
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = 'each';
      const ran = await executor.executePendingMigrations();
      return ran.map((migration) => migration.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1, $2)', [
        MIGRATION_LOCK.namespace,
        MIGRATION_LOCK.key,
      ]);
    }
  } finally {
    await runner.release();
  }
}
