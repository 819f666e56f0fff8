import { describe, expect, it } from '@jest/globals';
import type { DynamicModule, Type } from '@nestjs/common';
import { FASTIFY_ROUTE_CONSTRAINTS_METADATA } from '@nestjs/platform-fastify/constants.js';
import type { AppConfig } from '../config/app-config.js';
import { isManagementRoute } from '../management/listener-constraint.js';
import { OutboxModule } from '../outbox/outbox.module.js';
import { ConsoleModule } from './console.module.js';

/** Every controller of a module and of the modules it imports. */
function controllersOf(module: DynamicModule | Type, seen = new Set<unknown>()): Type[] {
  if (seen.has(module)) return [];
  seen.add(module);
  const type = 'module' in module ? module.module : module;
  const own: Type[] = [
    ...((Reflect.getMetadata('controllers', type) as Type[] | undefined) ?? []),
    ...('module' in module ? (module.controllers ?? []) : []),
  ];
  const imports = [
    ...((Reflect.getMetadata('imports', type) as (DynamicModule | Type)[] | undefined) ?? []),
    ...('module' in module ? ((module.imports as (DynamicModule | Type)[] | undefined) ?? []) : []),
  ];
  return [...own, ...imports.flatMap((imported) => controllersOf(imported, seen))];
}

/** The route handlers of a controller (methods with Nest's route path), with their constraints. */
function handlersOf(controller: Type): { name: string; constraints: unknown }[] {
  const prototype = controller.prototype as object;
  return Object.getOwnPropertyNames(prototype).flatMap((name) => {
    const method: unknown = Object.getOwnPropertyDescriptor(prototype, name)?.value;
    if (name === 'constructor' || typeof method !== 'function') return [];
    if (Reflect.getMetadata('path', method) === undefined) return [];
    const constraints: unknown = Reflect.getMetadata(FASTIFY_ROUTE_CONSTRAINTS_METADATA, method);
    return [{ name: `${controller.name}.${name}`, constraints }];
  });
}

describe('ConsoleModule', () => {
  it('is nothing at all without a CONSOLE_TOKEN', () => {
    const module = ConsoleModule.forRoot(
      { CONSOLE_TOKEN: undefined } as AppConfig,
      OutboxModule.forRoot(),
    );
    expect(module.controllers ?? []).toEqual([]);
    expect(module.imports ?? []).toEqual([]);
    expect(module.providers ?? []).toEqual([]);
  });

  it('serves every route of every console controller on the management port only', () => {
    const module = ConsoleModule.forRoot(
      { CONSOLE_TOKEN: 'x'.repeat(16) } as AppConfig,
      OutboxModule.forRoot(),
    );
    const controllers = controllersOf(module);
    expect(controllers.map((controller) => controller.name)).toEqual(
      expect.arrayContaining(['SignInController', 'SearchController', 'OrderController']),
    );
    const handlers = controllers.flatMap(handlersOf);
    expect(handlers.length).toBeGreaterThan(controllers.length);
    expect(
      handlers.filter((handler) => !isManagementRoute(handler.constraints)).map((h) => h.name),
    ).toEqual([]);
  });
});
