/**
 * The database of the application (global): the TypeORM data source, migrated at start
 * when DB_MIGRATE is set, and `Database`, the plain SQL on its pool.
 *
 * Each feature module registers the entities of its own tables, in the spirit of
 * @nestjs/typeorm's `TypeOrmModule.forFeature` with `autoLoadEntities`:
 *
 *   @Module({ imports: [DatabaseModule.forFeature([PaymentEntity, InstallmentEntity])] })
 *
 * and the data source is given every entity registered so far, so src/database knows no
 * feature. Only the schema builder (migration:generate) reads them: the code writes SQL.
 */
import { Global, Inject, Module, type DynamicModule } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { APP_LOGGER } from '../logging/logger.module.js';
import type { AppLogger } from '../logging/logger.js';
import { Database } from './database.js';
import { openDataSource, runMigrations, type EntityClass } from './data-source.js';

/**
 * The entities the feature modules registered. Process-wide, like @nestjs/typeorm's
 * storage: forFeature runs when a module is declared, before any data source starts.
 */
const registered = new Set<EntityClass>();

/** What `forFeature` returns: the registration is its effect, the module provides nothing. */
@Module({})
class DatabaseFeatureModule {}

@Global()
@Module({
  providers: [
    {
      provide: DataSource,
      inject: [APP_CONFIG, APP_LOGGER],
      useFactory: async (config: AppConfig, logger: AppLogger): Promise<DataSource> => {
        // A failure to connect is one line naming what failed (DatabaseConnectionError).
        const dataSource = await openDataSource({
          database: config,
          poolSize: config.DB_POOL_SIZE,
          entities: DatabaseModule.registeredEntities(),
        });
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
  /** Registers a feature's entities with the data source (import it in the feature's module). */
  static forFeature(entities: readonly EntityClass[]): DynamicModule {
    for (const entity of entities) registered.add(entity);
    return { module: DatabaseFeatureModule };
  }

  /** Every entity registered by the feature modules declared so far. */
  static registeredEntities(): EntityClass[] {
    return [...registered];
  }

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
