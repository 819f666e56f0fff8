import { Module, type DynamicModule } from '@nestjs/common';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { LoggerModule } from './common/logger.module.js';
import type { AppLogger } from './common/logger.js';
import { DatabaseModule } from './database/database.module.js';
import { HealthModule } from './health/health.module.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: AppLogger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(logger),
        DatabaseModule,
        HealthModule,
      ],
    };
  }
}
