import { describe, expect, it } from '@jest/globals';
import {
  assertHandlerRegistry,
  checkHandlerRegistry,
  type RegisteredHandler,
} from './handler-registry.js';

const event = (next?: unknown): RegisteredHandler => ({ isEventHandler: true, next });

describe('handler registry check', () => {
  const expected = ['order.a', 'order.b', 'order.c'];

  it('accepts exactly one event handler per type', () => {
    const handlers = new Map(expected.map((type) => [type, event()]));
    expect(() => assertHandlerRegistry(handlers, expected)).not.toThrow();
  });

  it('names missing, duplicated, unknown and request-response handlers', () => {
    const handlers = new Map<string, RegisteredHandler>([
      ['order.a', event(() => undefined)],
      ['order.b', { isEventHandler: false }],
      ['order.zzz', event()],
    ]);
    expect(checkHandlerRegistry(handlers, expected)).toEqual({
      missing: ['order.c'],
      duplicated: ['order.a'],
      unknown: ['order.zzz'],
      notEventHandlers: ['order.b'],
    });
    expect(() => assertHandlerRegistry(handlers, expected)).toThrow(
      'Order event handlers are not registered correctly: no handler for order.c; more than one handler for order.a; handlers for unknown event types order.zzz; @MessagePattern instead of @EventPattern for order.b',
    );
  });
});
