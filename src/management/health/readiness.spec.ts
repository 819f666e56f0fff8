import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Registry } from 'prom-client';
import { Database } from '../../database/database.js';
import { silentLogger } from '../../logging/logger.js';
import { KafkaAuthorizationStatus } from '../../messaging/security/kafka-authorization.js';
import { InboundEventsTransport } from '../../messaging/transport/inbound-events.transport.js';
import { Readiness } from './readiness.js';
import { READY_METRIC, ReadinessMetrics } from './readiness.metrics.js';

interface World {
  databaseUp: boolean;
  consumerReady: boolean;
  readonly authorization: KafkaAuthorizationStatus;
}

/** Readiness in a Nest module with a database that answers or not and a transport stand-in. */
async function readinessOf(world: World): Promise<Readiness> {
  const module = await Test.createTestingModule({
    imports: [TerminusModule.forRoot({ logger: false })],
    providers: [
      Readiness,
      {
        provide: Database,
        useValue: {
          ping: () => (world.databaseUp ? Promise.resolve() : Promise.reject(new Error('refused'))),
        },
      },
      {
        provide: InboundEventsTransport,
        useValue: {
          readiness: () =>
            world.consumerReady
              ? { ready: true, status: 'connected', sinceProgressMs: 10 }
              : { ready: false, status: 'kafka unreachable', sinceProgressMs: 30_000 },
        },
      },
      { provide: KafkaAuthorizationStatus, useValue: world.authorization },
    ],
  }).compile();
  return module.get(Readiness);
}

describe('Readiness and its gauge', () => {
  it('say the same as /health/ready: 1 only while database, consumer and ACLs are fine', async () => {
    const world: World = {
      databaseUp: true,
      consumerReady: true,
      authorization: new KafkaAuthorizationStatus(silentLogger()),
    };
    const readiness = await readinessOf(world);
    const registry = new Registry();
    new ReadinessMetrics(registry, () => readiness.ready());
    const gauge = async (): Promise<string> =>
      (await registry.metrics()).split('\n').find((line) => line.startsWith(`${READY_METRIC} `)) ??
      '';

    await expect(readiness.check()).resolves.toMatchObject({ status: 'ok' });
    expect(await gauge()).toBe(`${READY_METRIC} 1`);

    world.databaseUp = false;
    await expect(readiness.check()).rejects.toThrow();
    expect(await gauge()).toBe(`${READY_METRIC} 0`);

    world.databaseUp = true;
    world.consumerReady = false;
    expect(await gauge()).toBe(`${READY_METRIC} 0`);

    world.consumerReady = true;
    world.authorization.denied({
      resource: 'topic',
      name: 'payflow.payment-status.v1',
      operation: 'WRITE',
    });
    expect(await gauge()).toBe(`${READY_METRIC} 0`);
  });
});
