import { Module, type DynamicModule } from '@nestjs/common';
import { globalValueModule } from './global-value.module.js';
import type { AppLogger } from './logger.js';

export const APP_LOGGER = Symbol('APP_LOGGER');

/** The application's logger as APP_LOGGER, everywhere. */
@Module({})
export class LoggerModule {
  static forRoot(logger: AppLogger): DynamicModule {
    return globalValueModule(LoggerModule, APP_LOGGER, logger);
  }
}
