/**
 * Nest modules of the messaging layer:
 *
 * - MessagingModule.forRoot(): MESSAGE_PRODUCER (kafkajs, acks = all), connected at start-up
 *   and disconnected in onApplicationShutdown, i.e. after the outbox relay and the
 *   transport stopped; and KafkaAuthorizationStatus, the denials (ACLs withdrawn) that the
 *   producer and the order consumer met and that last, for /health/ready (its metrics
 *   through KAFKA_AUTHORIZATION_METRICS when provided).
 * - InboundEventsTransportModule.forRoot({ imports }): the InboundEventsTransport as a provider,
 *   so that Nest calls its beforeApplicationShutdown (drain) on SIGTERM. `imports` must make
 *   DEAD_LETTER_SINK (the dead-letters module) available, and INBOUND_EVENT_CODEC must be
 *   provided (OrdersModule provides it globally); APP_CONFIG and APP_LOGGER come from
 *   the global ConfigModule and LoggerModule. Then `connectInboundEvents(app, app.get(InboundEventsTransport))`.
 */
import {
  Global,
  Inject,
  Module,
  type DynamicModule,
  type ModuleMetadata,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { APP_LOGGER } from '../logging/logger.module.js';
import type { AppLogger } from '../logging/logger.js';
import { DEAD_LETTER_SINK, type DeadLetterSink } from './dead-letter.port.js';
import {
  KAFKA_AUTHORIZATION_METRICS,
  KafkaAuthorizationStatus,
  type KafkaAuthorizationMetrics,
} from './security/kafka-authorization.js';
import { kafkaClientOptionsFromConfig } from './kafka/kafka.client.js';
import { createKafkaMessageProducer, type KafkaProducerOptions } from './kafka/kafka.producer.js';
import {
  INBOUND_EVENT_CODEC,
  MESSAGE_PRODUCER,
  type InboundEventCodec,
  type MessageProducer,
} from './messaging.ports.js';
import { tracedProducer } from './kafka/traced-producer.js';
import { Tracing } from '../tracing/tracing.js';
import { InboundEventsTransport } from './transport/inbound-events.transport.js';
import {
  createInboundEventsTransport,
  type InboundEventsOverrides,
} from './kafka/inbound-events.wiring.js';
import { NO_METRICS, type InboundEventsMetrics } from './transport/transport.metrics.js';

/** Injection token of the transport's metrics sink (optional; defaults to none). */
export const ORDER_EVENTS_METRICS = Symbol('ORDER_EVENTS_METRICS');

@Global()
@Module({})
export class MessagingModule implements OnApplicationShutdown {
  constructor(@Inject(MESSAGE_PRODUCER) private readonly producer: MessageProducer) {}

  static forRoot(options: KafkaProducerOptions = {}): DynamicModule {
    return {
      module: MessagingModule,
      providers: [
        {
          provide: KafkaAuthorizationStatus,
          inject: [APP_LOGGER, { token: KAFKA_AUTHORIZATION_METRICS, optional: true }],
          useFactory: (
            logger: AppLogger,
            metrics?: KafkaAuthorizationMetrics | null,
          ): KafkaAuthorizationStatus => new KafkaAuthorizationStatus(logger, metrics ?? undefined),
        },
        {
          provide: MESSAGE_PRODUCER,
          inject: [
            APP_CONFIG,
            APP_LOGGER,
            KafkaAuthorizationStatus,
            { token: Tracing, optional: true },
          ],
          useFactory: async (
            config: AppConfig,
            logger: AppLogger,
            authorization: KafkaAuthorizationStatus,
            tracing?: Tracing | null,
          ): Promise<MessageProducer> => {
            const producer = createKafkaMessageProducer(
              kafkaClientOptionsFromConfig(config, logger),
              { idempotent: config.KAFKA_PRODUCER_IDEMPOTENT, authorization, ...options },
            );
            await producer.connect();
            // Publish spans only when an SDK records (traced-producer.ts).
            return tracing === undefined || tracing === null
              ? producer
              : tracedProducer(producer, tracing);
          },
        },
      ],
      exports: [MESSAGE_PRODUCER, KafkaAuthorizationStatus],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.producer.disconnect();
  }
}

@Module({})
export class InboundEventsTransportModule {
  static forRoot(
    options: {
      readonly imports?: ModuleMetadata['imports'];
      readonly overrides?: InboundEventsOverrides;
    } = {},
  ): DynamicModule {
    return {
      module: InboundEventsTransportModule,
      imports: options.imports ?? [],
      providers: [
        {
          provide: InboundEventsTransport,
          inject: [
            APP_CONFIG,
            APP_LOGGER,
            INBOUND_EVENT_CODEC,
            DEAD_LETTER_SINK,
            { token: ORDER_EVENTS_METRICS, optional: true },
            // From MessagingModule (global) when the application has it.
            { token: KafkaAuthorizationStatus, optional: true },
          ],
          useFactory: (
            config: AppConfig,
            logger: AppLogger,
            codec: InboundEventCodec,
            deadLetterSink: DeadLetterSink,
            metrics: InboundEventsMetrics | undefined,
            authorization: KafkaAuthorizationStatus | undefined,
          ): InboundEventsTransport =>
            createInboundEventsTransport(
              config,
              {
                codec,
                deadLetterSink,
                logger,
                metrics: metrics ?? NO_METRICS,
                ...(authorization ? { authorization } : {}),
              },
              options.overrides,
            ),
        },
      ],
      exports: [InboundEventsTransport],
    };
  }
}
