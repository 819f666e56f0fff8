import { Global, Module, type DynamicModule } from '@nestjs/common';
import type { AppLogger } from './logger.js';

export const APP_LOGGER = Symbol('APP_LOGGER');

@Global()
@Module({})
export class LoggerModule {
  static forRoot(logger: AppLogger): DynamicModule {
    return {
      module: LoggerModule,
      providers: [{ provide: APP_LOGGER, useValue: logger }],
      exports: [APP_LOGGER],
    };
  }
}
