/**
 * How the inbound-events transport is put into a Nest application.
 *
 * Hybrid application (HTTP + Kafka, the worker):
 *
 *   const transport = app.get(InboundEventsTransport); // from InboundEventsTransportModule
 *   connectInboundEvents(app, transport);
 *   await app.startAllMicroservices();                 // refuses to start on a bad registry
 *   app.enableShutdownHooks();                         // SIGTERM -> drain() -> close()
 *
 * Stand-alone microservice (tests, tools):
 *
 *   const ms = await createInboundEventsMicroservice(TestModule, transport, { logger: false });
 *   await ms.listen();
 *
 * Both install OrderEventExceptionFilter before Nest registers the handlers: global filters
 * are read when the listeners are registered, which `app.connectMicroservice()` does at once.
 */
import type { INestApplication, INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestMicroservice, type MicroserviceOptions } from '@nestjs/microservices';
import type { AppConfig, KafkaSecurityConfig } from '../../config/app-config.js';
import type { AppLogger } from '../../logging/logger.js';
import type { DeadLetterSink } from '../dead-letter.port.js';
import { kafkaClientOptionsFromConfig, type KafkaClientOptions } from './kafka.client.js';
import type { KafkaAuthorizationRecorder } from '../security/kafka-authorization.js';
import { createKafkaPartitionConsumer, type KafkaConsumerOptions } from './kafka.consumer.js';
import type { InboundEventCodec } from '../messaging.ports.js';
import { OrderEventExceptionFilter } from '../transport/handler-error.filter.js';
import {
  InboundEventsTransport,
  type InboundEventsTransportOptions,
} from '../transport/inbound-events.transport.js';
import type { InboundEventsMetrics } from '../transport/transport.metrics.js';

/** Connects the transport to a hybrid application, with OrderEventExceptionFilter. */
export function connectInboundEvents(
  app: INestApplication,
  transport: InboundEventsTransport,
): INestMicroservice {
  const microservice = app.connectMicroservice<MicroserviceOptions>(
    { strategy: transport },
    { inheritAppConfig: false, deferInitialization: true },
  );
  microservice.useGlobalFilters(new OrderEventExceptionFilter());
  if (!(microservice instanceof NestMicroservice)) {
    throw new Error('connectInboundEvents: unexpected microservice implementation');
  }
  // What connectMicroservice() does without deferInitialization, now that the filter is in.
  microservice.registerListeners();
  microservice.setIsInitialized(true);
  microservice.setIsInitHookCalled(true);
  return microservice;
}

/** A stand-alone Nest microservice running the transport, with OrderEventExceptionFilter. */
export async function createInboundEventsMicroservice(
  module: Parameters<typeof NestFactory.createMicroservice>[0],
  transport: InboundEventsTransport,
  options: NonNullable<Parameters<typeof NestFactory.createMicroservice>[1]> = {},
): Promise<INestMicroservice> {
  const microservice = await NestFactory.createMicroservice<MicroserviceOptions>(module, {
    ...options,
    strategy: transport,
  });
  microservice.useGlobalFilters(new OrderEventExceptionFilter());
  return microservice;
}

export type InboundEventsConfig = Pick<
  AppConfig,
  | 'KAFKA_BROKERS'
  | 'KAFKA_CLIENT_ID'
  | 'KAFKA_GROUP_ID'
  | 'KAFKA_SESSION_TIMEOUT'
  | 'KAFKA_FETCH_MAX_WAIT'
  | 'TOPIC_ORDERS'
  | 'MAX_IN_FLIGHT'
  | 'MAX_IN_FLIGHT_BYTES'
  | 'ORDER_SEQUENCING'
  | 'RETRY_MAX_ATTEMPTS'
  | 'RETRY_MAX_DURATION'
  | keyof KafkaSecurityConfig
>;

export interface InboundEventsOverrides {
  readonly client?: Partial<KafkaClientOptions>;
  readonly consumer?: Partial<KafkaConsumerOptions>;
  readonly transport?: Partial<
    Omit<InboundEventsTransportOptions, 'consumer' | 'codec' | 'deadLetterSink' | 'logger'>
  >;
}

/** The transport as the worker's configuration describes it. */
export function createInboundEventsTransport(
  config: InboundEventsConfig,
  deps: {
    readonly codec: InboundEventCodec;
    readonly deadLetterSink: DeadLetterSink;
    readonly logger: AppLogger;
    readonly metrics?: InboundEventsMetrics;
    /** Where the consumer records denials (an ACL withdrawn); /health/ready reads them. */
    readonly authorization?: KafkaAuthorizationRecorder;
  },
  overrides: InboundEventsOverrides = {},
): InboundEventsTransport {
  const consumer = createKafkaPartitionConsumer(
    { ...kafkaClientOptionsFromConfig(config, deps.logger), ...overrides.client },
    {
      groupId: config.KAFKA_GROUP_ID,
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT,
      maxWaitTimeInMs: config.KAFKA_FETCH_MAX_WAIT,
      ...(deps.authorization === undefined ? {} : { authorization: deps.authorization }),
      ...overrides.consumer,
    },
  );
  return new InboundEventsTransport({
    consumer,
    topic: config.TOPIC_ORDERS,
    codec: deps.codec,
    deadLetterSink: deps.deadLetterSink,
    logger: deps.logger,
    maxInFlight: config.MAX_IN_FLIGHT,
    maxInFlightBytes: config.MAX_IN_FLIGHT_BYTES,
    sequencing: config.ORDER_SEQUENCING,
    retry: { maxAttempts: config.RETRY_MAX_ATTEMPTS, maxDurationMs: config.RETRY_MAX_DURATION },
    ...(deps.metrics === undefined ? {} : { metrics: deps.metrics }),
    ...overrides.transport,
  });
}
