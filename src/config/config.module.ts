import { Module, type DynamicModule } from '@nestjs/common';
import { globalValueModule } from '../logging/global-value.module.js';
import type { AppConfig } from './app-config.js';

/** Injection token of the validated configuration object. */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** The validated configuration as APP_CONFIG, everywhere. */
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return globalValueModule(ConfigModule, APP_CONFIG, config);
  }
}
