import {
  Global,
  Inject,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { DataSource, type DataSourceOptions } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { APP_LOGGER } from '../common/logger.module.js';
import type { AppLogger } from '../common/logger.js';
import { Database } from './database.js';
import { createDataSource, runMigrations } from './data-source.js';

/** The tables' entities, given by the application (src/entities.ts); none when absent. */
const DATABASE_ENTITIES = Symbol('DATABASE_ENTITIES');

@Global()
@Module({
  providers: [
    {
      provide: DataSource,
      inject: [APP_CONFIG, APP_LOGGER, { token: DATABASE_ENTITIES, optional: true }],
      useFactory: async (
        config: AppConfig,
        logger: AppLogger,
        entities: DataSourceOptions['entities'] | undefined,
      ): Promise<DataSource> => {
        const dataSource = createDataSource({
          url: config.DATABASE_URL,
          poolSize: config.DB_POOL_SIZE,
          entities,
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
  /** The module with the application's entities (the code itself writes plain SQL). */
  static forRoot(entities: DataSourceOptions['entities']): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [{ provide: DATABASE_ENTITIES, useValue: entities }],
    };
  }

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
