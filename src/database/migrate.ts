/** `npm run migration:run`: applies pending migrations to DATABASE_URL and exits. */
import { loadDatabaseConfig } from '../config/app-config.js';
import type { DataSource } from 'typeorm';
import { openDataSource, runMigrations } from './data-source.js';

let dataSource: DataSource | undefined;
try {
  // Configuration and connection errors are one line each (ConfigError, DatabaseConnectionError).
  dataSource = await openDataSource({ database: loadDatabaseConfig(process.env), poolSize: 1 });
  const ran = await runMigrations(dataSource);
  console.log(ran.length === 0 ? 'migrations: none pending' : `migrations ran: ${ran.join(', ')}`);
} catch (error) {
  console.error(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  if (dataSource?.isInitialized === true) await dataSource.destroy();
}
