/**
 * Builds and runs the worker: HTTP listener (health, metrics), the order-events transport,
 * the outbox relay. `main.ts` runs it from the environment; tests and benchmarks run the
 * same function with their own configuration.
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule, type WorkerOverrides } from './app.module.js';
import type { AppConfig } from './config/app-config.js';
import type { AppLogger } from './common/logger.js';
import { NestPinoLogger } from './common/nest-logger.js';
import { kafkaClientOptionsFromConfig } from './messaging/kafka.client.js';
import { checkWorkerTopics } from './messaging/kafka.topics.js';
import { connectOrderEvents } from './messaging/order-events.wiring.js';
import { OrderEventsTransport } from './messaging/order-events.transport.js';
import { OutboxRelay } from './outbox/outbox.relay.js';

/** The whole shutdown must fit in this (Kubernetes' default grace period is 30 s). */
export const SHUTDOWN_DEADLINE_MS = 30_000;

export interface Worker {
  readonly app: NestFastifyApplication;
  /** Base URL of the HTTP listener (http or https). */
  readonly url: string;
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
  // Topics are never auto-created: refuse to start (TopicsMissingError, naming each one)
  // before anything connects, rather than consume or publish into nothing.
  await checkWorkerTopics(kafkaClientOptionsFromConfig(config, logger), config);
  const https =
    config.TLS_CERT_FILE !== undefined && config.TLS_KEY_FILE !== undefined
      ? { cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE) }
      : null;
  const adapter = new FastifyAdapter({ bodyLimit: 256 * 1024, ...(https ? { https } : {}) });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger, overrides),
    adapter,
    { logger: new NestPinoLogger(logger), abortOnError: false },
  );
  const transport = app.get(OrderEventsTransport);
  const relay = app.get(OutboxRelay);
  connectOrderEvents(app, transport);
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  await app.startAllMicroservices();
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : config.HTTP_PORT;
  const url = `${https ? 'https' : 'http'}://127.0.0.1:${port}`;
  logger.info({ port, tls: https !== null }, 'payflow-bridge started');

  let stopping: Promise<void> | undefined;
  return {
    app,
    url,
    onCrash: (listener) => {
      transport.on('crash', listener);
    },
    shutdown: () =>
      (stopping ??= (async () => {
        logger.info('payflow-bridge shutting down');
        await transport.drain();
        await relay.flush();
        await app.close();
        logger.info('payflow-bridge stopped');
      })()),
  };
}
