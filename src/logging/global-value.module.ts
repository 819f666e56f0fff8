import type { DynamicModule, Type } from '@nestjs/common';

/**
 * The dynamic module `module` that provides one value under `token` to the whole
 * application (global): the configuration, the logger.
 */
export function globalValueModule(module: Type, token: symbol, value: unknown): DynamicModule {
  return {
    module,
    global: true,
    providers: [{ provide: token, useValue: value }],
    exports: [token],
  };
}
