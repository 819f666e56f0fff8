/**
 * The TypeORM data source. Schema changes only ever come from the migrations in
 * migrations/ (never `synchronize`).
 */
import { DataSource, MigrationExecutor } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';

/** A table's entity class (a feature's `*.entity.ts`). */
export type EntityClass = new () => object;

export interface DatabaseOptions {
  url: string;
  poolSize?: number;
  applicationName?: string;
  /**
   * The tables' entities (registered by the feature modules, or src/entities.ts). Only the
   * schema builder (migration:generate) reads them: the code writes plain SQL, so a data
   * source for that alone may omit them.
   */
  entities?: readonly EntityClass[];
}

export function createDataSource(options: DatabaseOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
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
