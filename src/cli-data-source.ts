/** What the TypeORM CLI loads for `npm run migration:generate` and `migration:revert`. */
import { loadDatabaseConfig } from '../config/app-config.js';
import { createDataSource } from './data-source.js';

export default createDataSource({ url: loadDatabaseConfig(process.env).DATABASE_URL, poolSize: 1 });
