/**
 * The worker: `npm run build && npm start`. Configuration is validated before anything
 * else; a bad value ends start-up with one line naming the variable.
 */
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { ConfigError, loadConfig, type AppConfig } from './config/app-config.js';
import { createLogger } from './common/logger.js';
import { NestPinoLogger } from './common/nest-logger.js';

function readConfig(): AppConfig {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

async function bootstrap(): Promise<void> {
  const config = readConfig();
  const logger = createLogger({ level: config.LOG_LEVEL });
  const https =
    config.TLS_CERT_FILE !== undefined && config.TLS_KEY_FILE !== undefined
      ? { cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE) }
      : null;
  const adapter = new FastifyAdapter({ bodyLimit: 256 * 1024, ...(https ? { https } : {}) });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger),
    adapter,
    {
      logger: new NestPinoLogger(logger),
    },
  );
  app.enableShutdownHooks();
  await app.listen(config.HTTP_PORT, config.HTTP_HOST);
  logger.info({ port: config.HTTP_PORT, tls: https !== null }, 'payflow-bridge listening');
}

bootstrap().catch((error: unknown) => {
  console.error(
    `payflow-bridge failed to start: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exit(1);
});
