import { Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { APP_LOGGER } from '../common/logger.module.js';
import type { AppLogger } from '../common/logger.js';
import { Database } from './database.js';
import { createDataSource, runMigrations } from './data-source.js';

@Global()
@Module({
  providers: [
    {
      provide: DataSource,
      inject: [APP_CONFIG, APP_LOGGER],
      useFactory: async (config: AppConfig, logger: AppLogger): Promise<DataSource> => {
        const dataSource = createDataSource({
          url: config.DATABASE_URL,
          poolSize: config.DB_POOL_SIZE,
        });
        await dataSource.initialize();
        if (config.DB_MIGRATE) {
          const ran = await runMigrations(dataSource);
          if (ran.length > 0) logger.info({ migrations: ran }, 'database migrated');
        }
        return dataSource;
      },
    },
    Database,
  ],
  exports: [DataSource, Database],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
