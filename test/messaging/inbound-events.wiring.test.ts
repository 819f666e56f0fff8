/**
 * The production wiring: a hybrid Nest application (Fastify + the inbound-events transport)
 * built from the worker's configuration through InboundEventsTransportModule and
 * connectInboundEvents. Proves that handler errors reach the failure policy with their class
 * (OrderEventExceptionFilter is in place), that module init hooks run once, and that
 * closing the application drains the transport (beforeApplicationShutdown).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Global,
  Injectable,
  Module,
  type INestApplication,
  type OnModuleInit,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { LoggerModule } from '../../src/logging/logger.module.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { ConfigModule } from '../../src/config/config.module.js';
import { DEAD_LETTER_SINK } from '../../src/messaging/dead-letter.port.js';
import { createKafkaMessageProducer } from '../../src/messaging/kafka/kafka.producer.js';
import { InboundEventsTransportModule } from '../../src/messaging/messaging.module.js';
import { INBOUND_EVENT_CODEC, type MessageProducer } from '../../src/messaging/messaging.ports.js';
import { InboundEventsTransport } from '../../src/messaging/transport/inbound-events.transport.js';
import { connectInboundEvents } from '../../src/messaging/kafka/inbound-events.wiring.js';
import { orderEventCodec } from '../../src/orders/order-event.codec.js';
import { PayflowValidationError } from '../../src/payflow/payflow.errors.js';
import { KafkaMockCluster, mockSafePartitionAssigner } from '../../testbed/kafka/mock-cluster.js';
import {
  MEMBER,
  MemorySink,
  RECORDER,
  Recorder,
  RecordingController,
  orderEvent,
  testLogger,
  waitFor,
  waitForCommittedToReachEnd,
} from './harness.js';

const TOPIC = 'orders.wiring';
const GROUP = 'wiring';

@Injectable()
class InitCounter implements OnModuleInit {
  static inits = 0;
  onModuleInit(): void {
    InitCounter.inits++;
  }
}

describe('OrderEventsTransport: wiring into a hybrid Nest application', () => {
  let cluster: KafkaMockCluster;
  let admin: Admin;
  let producer: MessageProducer;
  let app: INestApplication | undefined;

  beforeAll(async () => {
    cluster = await KafkaMockCluster.start({
      brokers: 1,
      topics: [{ name: TOPIC, partitions: 2 }],
    });
    admin = new Kafka({
      clientId: 'wiring-test-admin',
      brokers: cluster.brokers,
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    // The mock cluster cannot serve InitProducerId: the plain producer.
    producer = createKafkaMessageProducer(
      { brokers: cluster.brokers, clientId: 'wiring-test' },
      { idempotent: false },
    );
    await producer.connect();
  });

  afterAll(async () => {
    await app?.close();
    await producer?.disconnect();
    await admin?.disconnect();
    await cluster?.stop();
  });

  it('delivers error classes to the failure policy and drains on close', async () => {
    const sink = new MemorySink();
    const recorder = new Recorder();
    recorder.behaviour = (envelope) =>
      envelope.orderId === 'rejected'
        ? Promise.reject(
            new PayflowValidationError(
              { endpoint: 'createPayment', method: 'POST', reached: 'yes', status: 422 },
              [],
            ),
          )
        : Promise.resolve();
    const config = {
      KAFKA_BROKERS: cluster.brokers,
      KAFKA_CLIENT_ID: 'wiring',
      KAFKA_GROUP_ID: GROUP,
      TOPIC_ORDERS: TOPIC,
      MAX_IN_FLIGHT: 16,
      RETRY_MAX_ATTEMPTS: 3,
      RETRY_MAX_DURATION: 60_000,
    } as Partial<AppConfig> as AppConfig;

    @Global()
    @Module({
      providers: [
        { provide: DEAD_LETTER_SINK, useValue: sink },
        { provide: INBOUND_EVENT_CODEC, useValue: orderEventCodec },
      ],
      exports: [DEAD_LETTER_SINK, INBOUND_EVENT_CODEC],
    })
    class SinkModule {}

    @Module({
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(testLogger()),
        SinkModule,
        InboundEventsTransportModule.forRoot({
          overrides: {
            consumer: {
              sessionTimeoutMs: 6000,
              heartbeatIntervalMs: 500,
              maxWaitTimeInMs: 100,
              partitionAssigners: [mockSafePartitionAssigner()],
            },
            transport: { commitIntervalMs: 100, retry: { baseDelayMs: 10, maxDelayMs: 20 } },
          },
        }),
      ],
      controllers: [RecordingController],
      providers: [
        { provide: RECORDER, useValue: recorder },
        { provide: MEMBER, useValue: 'hybrid' },
        InitCounter,
      ],
    })
    class WiringModule {}

    app = await NestFactory.create(WiringModule, new FastifyAdapter(), { logger: false });
    const transport = app.get(InboundEventsTransport);
    connectInboundEvents(app, transport);
    await app.init();
    await app.startAllMicroservices();
    expect(transport.currentStatus).toBe('connected');
    expect(InitCounter.inits).toBe(1);

    await producer.send([
      orderEvent(TOPIC, 'rejected', 0, { type: 'order.payment_requested' }),
      orderEvent(TOPIC, 'fine', 1),
    ]);
    await waitFor('the dead letter', () => sink.letters.length === 1, 10_000);
    expect(sink.letters[0]).toMatchObject({ reason: 'rejected_by_payflow', attempts: 1 });
    await waitFor('the good event', () => recorder.succeeded().length === 1, 10_000);
    await waitForCommittedToReachEnd(admin, GROUP, TOPIC);

    await app.close();
    app = undefined;
    expect(transport.currentStatus).toBe('closed');
    expect(InitCounter.inits).toBe(1);
  });
});
