/**
 * The TypeORM data source. Schema changes only ever come from the migrations in
 * migrations/ (never `synchronize`).
 */
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { ENTITIES } from './entities.js';

export interface DatabaseOptions {
  url: string;
  poolSize?: number;
  applicationName?: string;
}

export function createDataSource(options: DatabaseOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    poolSize: options.poolSize ?? 20,
    applicationName: options.applicationName ?? 'payflow-bridge',
  });
}

/** Runs pending migrations; returns the names of those that ran. */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const ran = await dataSource.runMigrations({ transaction: 'each' });
  return ran.map((migration) => migration.name);
}
