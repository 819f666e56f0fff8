/**
 * Builds and runs the worker: its two HTTP listeners (public: the webhook receiver on
 * HTTP_PORT; management: health and metrics on MANAGEMENT_PORT), the inbound-events
 * transport, the outbox relay. `main.ts` runs it from the environment; tests and benchmarks
 * run the same function with their own configuration.
 *
 * One Nest application, one fastify instance and one DI container serve both listeners:
 * fastify listens on the public port with a hardened server (src/management/public-listener.ts),
 * a second Node server on the management port hands its requests to the same fastify
 * instance, and the router's `listener` constraint keeps each route on its own listener
 * (src/management/listener-constraint.ts).
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule, type WorkerOverrides } from './app.module.js';
import type { AppConfig } from './config/app-config.js';
import type { AppLogger } from './logging/logger.js';
import { NestPinoLogger } from './logging/nest-logger.js';
import { LISTENER_CONSTRAINT, listenerConstraint } from './management/listener-constraint.js';
import {
  ManagementListener,
  localUrl,
  managementTlsOptions,
} from './management/management-listener.js';
import {
  PUBLIC_BODY_LIMIT_BYTES,
  PublicListener,
  publicListenerOptions,
} from './management/public-listener.js';
import { kafkaClientOptionsFromConfig } from './messaging/kafka/kafka.client.js';
import { checkWorkerTopics } from './messaging/kafka/kafka.topics.js';
import { connectInboundEvents } from './messaging/kafka/inbound-events.wiring.js';
import { InboundEventsTransport } from './messaging/transport/inbound-events.transport.js';
import { MetricsService } from './management/metrics/metrics.service.js';
import { OutboxRelay } from './outbox/outbox.relay.js';

/** The whole shutdown must fit in this (Kubernetes' default grace period is 30 s). */
export const SHUTDOWN_DEADLINE_MS = 30_000;

export interface Worker {
  readonly app: NestFastifyApplication;
  /** Base URL of the public listener (http or https): the webhook receiver only. */
  readonly url: string;
  /**
   * Base URL of the management listener (http, or https with MANAGEMENT_TLS_CERT_FILE):
   * /metrics, /health/live, /health/ready, /console.
   */
  readonly managementUrl: string;
  /**
   * Stops fetching, lets in-flight events finish and commits their offsets, publishes
   * what the outbox holds, then closes everything. Idempotent.
   */
  shutdown(): Promise<void>;
  /** Called when the order consumer stopped for good (the process should be restarted). */
  onCrash(listener: (error: Error) => void): void;
}

export async function startWorker(
  config: AppConfig,
  logger: AppLogger,
  overrides: WorkerOverrides = {},
): Promise<Worker> {
  // The management port's certificate is read first: a file that cannot be read, or a
  // certificate and key that do not make a pair, stop start-up before anything connects.
  const managementTls = managementTlsOptions(config);
  // Topics are never auto-created: refuse to start (TopicsMissingError, naming each one)
  // before anything connects, rather than consume or publish into nothing.
  await checkWorkerTopics(kafkaClientOptionsFromConfig(config, logger), config);
  const publicListener = new PublicListener(publicListenerOptions(config));
  const adapter = new FastifyAdapter({
    bodyLimit: PUBLIC_BODY_LIMIT_BYTES,
    // One router for both listeners; the constraint keeps each route on its own.
    routerOptions: { constraints: { [LISTENER_CONSTRAINT]: listenerConstraint } },
    ...publicListener.serverOptions(),
  });
  publicListener.installHooks(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger, overrides),
    adapter,
    { logger: new NestPinoLogger(logger), abortOnError: false },
  );
  publicListener.reportTo(app.get(MetricsService));
  const transport = app.get(InboundEventsTransport);
  const relay = app.get(OutboxRelay);
  connectInboundEvents(app, transport);
  let management: ManagementListener;
  try {
    await app.listen(config.HTTP_PORT, config.HTTP_HOST);
    const fastify = adapter.getInstance();
    management = await ManagementListener.start(
      (request, response) => fastify.routing(request, response),
      config.MANAGEMENT_PORT,
      config.MANAGEMENT_HOST,
      managementTls,
    );
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : config.HTTP_PORT;
  const url = localUrl(publicListener.tls ? 'https' : 'http', config.HTTP_HOST, port);
  logger.info(
    { listener: 'public', host: config.HTTP_HOST, port, tls: publicListener.tls },
    'listening for webhooks',
  );
  logger.info(
    {
      listener: 'management',
      host: config.MANAGEMENT_HOST,
      port: management.port,
      tls: managementTls !== null,
    },
    'listening for operations (metrics, health)',
  );
  try {
    await app.startAllMicroservices();
  } catch (error) {
    await management.close();
    throw error;
  }
  logger.info(
    { port, tls: publicListener.tls, managementPort: management.port },
    'payflow-bridge started',
  );

  let stopping: Promise<void> | undefined;
  return {
    app,
    url,
    managementUrl: management.url,
    onCrash: (listener) => {
      transport.on('crash', listener);
    },
    shutdown: () =>
      (stopping ??= (async () => {
        logger.info('payflow-bridge shutting down');
        await transport.drain();
        await relay.flush();
        await app.close();
        await management.close();
        logger.info('payflow-bridge stopped');
      })()),
  };
}
