/**
 * Which of the worker's two listeners a route is served on, decided by fastify's router.
 *
 * Both listeners hand their requests to the one fastify instance of the Nest application
 * (one DI container, one set of hooks). The router carries a `listener` constraint: a
 * request that came through the management listener derives `listener = management` and,
 * as the strategy says `mustMatchWhenDerived`, matches only routes that carry that
 * constraint; a request through the public listener derives nothing and so matches only
 * routes without it. A management route is therefore not found on the public port (the
 * router never sees it there), and a webhook route is not found on the management port.
 *
 * A controller is put on the management listener with `@ServedOnManagementPort()` (Nest's
 * `@RouteConstraints` on each of its handlers). Routes without it are public, and the public
 * listener refuses to start with a route outside the receiver's prefix (public-listener.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyServerOptions } from 'fastify';
import { RouteConstraints } from '@nestjs/platform-fastify';
import { FASTIFY_ROUTE_CONSTRAINTS_METADATA } from '@nestjs/platform-fastify/constants.js';
import { ValidationError } from '../errors/app-error.js';

export const LISTENER_CONSTRAINT = 'listener';
export const MANAGEMENT = 'management';

type ConstraintStrategy = NonNullable<
  NonNullable<FastifyServerOptions['routerOptions']>['constraints']
>[string];
type HandlerStore = ReturnType<ConstraintStrategy['storage']>;
type StoredHandler = Parameters<HandlerStore['set']>[1];

const managementRequests = new WeakSet<IncomingMessage>();

/** The management listener marks each request it hands to fastify. */
export function markManagementRequest(request: IncomingMessage): void {
  managementRequests.add(request);
}

export function isManagementRequest(request: IncomingMessage): boolean {
  return managementRequests.has(request);
}

/** The router's `listener` constraint (FastifyAdapter option `routerOptions.constraints`). */
export const listenerConstraint: ConstraintStrategy = {
  name: LISTENER_CONSTRAINT,
  mustMatchWhenDerived: true,
  storage(): HandlerStore {
    const handlers = new Map<unknown, StoredHandler>();
    return {
      get: (value) => handlers.get(value) ?? null,
      set: (value, handler) => {
        handlers.set(value, handler);
      },
    };
  },
  validate(value: unknown): void {
    if (value !== MANAGEMENT) {
      throw new ValidationError(
        'HTTP.BAD_LISTENER_CONSTRAINT',
        `the ${LISTENER_CONSTRAINT} constraint is "${MANAGEMENT}" or absent`,
      );
    }
  },
  // Typed by find-my-way as returning the constraint's value; undefined is how a strategy
  // says "nothing derived" (the request then matches only routes without the constraint).
  deriveConstraint: (request: IncomingMessage) =>
    (isManagementRequest(request) ? MANAGEMENT : undefined) as string,
};

/**
 * Serves every route of the decorated controller on the management listener
 * (MANAGEMENT_PORT) and nowhere else. Keeps a handler's other route constraints.
 */
export function ServedOnManagementPort(): ClassDecorator {
  return (target) => {
    const prototype = target.prototype as object;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
      if (name === 'constructor' || typeof descriptor?.value !== 'function') continue;
      const own: unknown = Reflect.getMetadata(
        FASTIFY_ROUTE_CONSTRAINTS_METADATA,
        descriptor.value as object,
      );
      RouteConstraints({
        ...(typeof own === 'object' && own !== null ? own : {}),
        [LISTENER_CONSTRAINT]: MANAGEMENT,
      })(prototype, name, descriptor);
    }
  };
}

/** Whether a route's constraints put it on the management listener. */
export function isManagementRoute(constraints: unknown): boolean {
  return (
    typeof constraints === 'object' &&
    constraints !== null &&
    (constraints as Record<string, unknown>)[LISTENER_CONSTRAINT] === MANAGEMENT
  );
}
