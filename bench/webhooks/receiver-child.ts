/**
 * The worker's public listener alone, for the webhook benchmark: the same fastify adapter
 * and server as `startWorker` (PublicListener: bodyLimit 256 KiB, HTTPS from
 * TLS_CERT_FILE/TLS_KEY_FILE, its time-outs and per-address connection limit) with the
 * config, logger, database, metrics and webhook receiver modules, and no Kafka (the full
 * worker cannot start without a broker) nor management listener. Configured by the
 * environment like `main.ts` (BENCH_CONCURRENCY above HTTP_MAX_CONNECTIONS_PER_ADDRESS
 * needs that raised); prints `{"msg":"receiver ready","port":N}` once listening; SIGTERM
 * closes it.
 */
import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { ConfigModule } from '../../src/config/config.module.js';
import { LoggerModule } from '../../src/logging/logger.module.js';
import { createLogger, type AppLogger } from '../../src/logging/logger.js';
import { NestPinoLogger } from '../../src/logging/nest-logger.js';
import { DatabaseModule } from '../../src/database/database.module.js';
import {
  PUBLIC_BODY_LIMIT_BYTES,
  PublicListener,
  publicListenerOptions,
} from '../../src/management/public-listener.js';
import { MetricsModule } from '../../src/management/metrics/metrics.module.js';
import { MetricsService } from '../../src/management/metrics/metrics.service.js';
import { WebhooksReceiverModule } from '../../src/webhooks/webhooks-receiver.module.js';

@Module({})
class ReceiverOnlyModule {
  static forRoot(config: AppConfig, logger: AppLogger): DynamicModule {
    const number = (name: string): number | undefined =>
      process.env[name] === undefined ? undefined : Number(process.env[name]);
    return {
      module: ReceiverOnlyModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggerModule.forRoot(logger),
        DatabaseModule,
        MetricsModule,
        WebhooksReceiverModule.forRoot({
          rateLimitPerSecond: number('WEBHOOK_RATE_LIMIT_PER_SECOND'),
          rateLimitBurst: number('WEBHOOK_RATE_LIMIT_BURST'),
        }),
      ],
    };
  }
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL });
  const publicListener = new PublicListener(publicListenerOptions(config));
  const adapter = new FastifyAdapter({
    bodyLimit: PUBLIC_BODY_LIMIT_BYTES,
    ...publicListener.serverOptions(),
  });
  publicListener.installHooks(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(
    ReceiverOnlyModule.forRoot(config, logger),
    adapter,
    { logger: new NestPinoLogger(logger), abortOnError: false },
  );
  publicListener.reportTo(app.get(MetricsService));
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address !== null ? address.port : config.HTTP_PORT;
  process.stdout.write(`${JSON.stringify({ msg: 'receiver ready', port })}\n`);
  const stop = (): void => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(
    `receiver failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
