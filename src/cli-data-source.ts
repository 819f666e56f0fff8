/** What the TypeORM CLI loads for `npm run migration:generate` and `migration:revert`. */
import { loadDatabaseConfig } from './config/app-config.js';
import { createDataSource } from './database/data-source.js';
import { ENTITIES } from './entities.js';

export default createDataSource({
  database: loadDatabaseConfig(process.env),
  poolSize: 1,
  entities: ENTITIES,
});
