import { afterEach, describe, expect, it } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import { Controller, Get, Post } from '@nestjs/common';
import { RouteConstraints } from '@nestjs/platform-fastify';
import { FASTIFY_ROUTE_CONSTRAINTS_METADATA } from '@nestjs/platform-fastify/constants.js';
import fastify, { type FastifyInstance } from 'fastify';
import {
  LISTENER_CONSTRAINT,
  MANAGEMENT,
  ServedOnManagementPort,
  isManagementRoute,
  listenerConstraint,
  markManagementRequest,
} from './listener-constraint.js';
import { ManagementListener, localUrl } from './management-listener.js';

@Controller('ops')
@ServedOnManagementPort()
class OpsController {
  @Get('a')
  a(): string {
    return 'a';
  }

  @Post('b')
  @RouteConstraints({ host: 'ops.internal' })
  b(): string {
    return 'b';
  }
}

const constraintsOf = (name: 'a' | 'b'): unknown =>
  Reflect.getMetadata(
    FASTIFY_ROUTE_CONSTRAINTS_METADATA,
    Object.getOwnPropertyDescriptor(OpsController.prototype, name)?.value as object,
  );

describe('@ServedOnManagementPort()', () => {
  it('puts every handler of the controller on the management listener, keeping its own constraints', () => {
    expect(constraintsOf('a')).toEqual({ [LISTENER_CONSTRAINT]: MANAGEMENT });
    expect(constraintsOf('b')).toEqual({
      host: 'ops.internal',
      [LISTENER_CONSTRAINT]: MANAGEMENT,
    });
    expect(isManagementRoute(constraintsOf('a'))).toBe(true);
    expect(isManagementRoute(undefined)).toBe(false);
    expect(isManagementRoute({ host: 'x' })).toBe(false);
  });
});

describe('the listener constraint', () => {
  it('derives "management" for a request the management listener marked, nothing otherwise', () => {
    const marked = {} as IncomingMessage;
    markManagementRequest(marked);
    expect(listenerConstraint.deriveConstraint(marked)).toBe(MANAGEMENT);
    expect(listenerConstraint.deriveConstraint({} as IncomingMessage)).toBeUndefined();
  });

  it('accepts only "management" as a route’s value', () => {
    expect(() => listenerConstraint.validate?.(MANAGEMENT)).not.toThrow();
    expect(() => listenerConstraint.validate?.('public')).toThrow(/"management" or absent/);
  });

  describe('with a public and a management listener over one fastify instance', () => {
    let app: FastifyInstance;
    let management: ManagementListener;

    afterEach(async () => {
      await app.close();
      await management.close();
    });

    it('serves each route on its own listener only', async () => {
      app = fastify({
        routerOptions: { constraints: { [LISTENER_CONSTRAINT]: listenerConstraint } },
      });
      app.get('/metrics', { constraints: { [LISTENER_CONSTRAINT]: MANAGEMENT } }, () => 'm');
      app.post('/webhooks/payflow/:token/:kind', () => 'w');
      const publicUrl = await app.listen({ port: 0, host: '127.0.0.1' });
      management = await ManagementListener.start(
        (request, response) => app.routing(request, response),
        0,
        '127.0.0.1',
      );
      expect(management.url).toBe(`http://127.0.0.1:${management.port}`);

      const status = async (base: string, method: string, path: string) =>
        (await fetch(`${base}${path}`, { method })).status;
      expect({
        publicMetrics: await status(publicUrl, 'GET', '/metrics'),
        managementMetrics: await status(management.url, 'GET', '/metrics'),
        managementMetricsHead: await status(management.url, 'HEAD', '/metrics'),
        publicWebhook: await status(publicUrl, 'POST', '/webhooks/payflow/t/k'),
        managementWebhook: await status(management.url, 'POST', '/webhooks/payflow/t/k'),
      }).toEqual({
        publicMetrics: 404,
        managementMetrics: 200,
        managementMetricsHead: 200,
        publicWebhook: 200,
        managementWebhook: 404,
      });
    });
  });
});

describe('localUrl', () => {
  it('reaches a wildcard listener on the loopback, and a bound one at its address', () => {
    expect(localUrl('http', '0.0.0.0', 9464)).toBe('http://127.0.0.1:9464');
    expect(localUrl('http', '::', 9464)).toBe('http://127.0.0.1:9464');
    expect(localUrl('https', '10.0.0.5', 3000)).toBe('https://10.0.0.5:3000');
    expect(localUrl('http', '::1', 9464)).toBe('http://[::1]:9464');
  });
});
