/** `npm run migration:run`: applies pending migrations to DATABASE_URL and exits. */
import { loadDatabaseConfig } from '../config/app-config.js';
import { createDataSource, runMigrations } from './data-source.js';

const config = loadDatabaseConfig(process.env);
const dataSource = createDataSource({ url: config.DATABASE_URL, poolSize: 1 });
try {
  await dataSource.initialize();
  const ran = await runMigrations(dataSource);
  console.log(ran.length === 0 ? 'migrations: none pending' : `migrations ran: ${ran.join(', ')}`);
} catch (error) {
  console.error(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  if (dataSource.isInitialized) await dataSource.destroy();
}
