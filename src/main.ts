/**
 * The worker: `npm run build && npm start`. Configuration is validated before anything
 * else; a bad value ends start-up with one line naming the variable. SIGTERM or SIGINT
 * drain it within 30 seconds.
 */
import 'reflect-metadata';
import { limitHeapGrowth } from './memory/heap-growth.js';
import { ConfigError, loadConfig, type AppConfig } from './config/app-config.js';
import { createLogger } from './logging/logger.js';
import { postgresConnection } from './database/connection-options.js';
import { TopicsMissingError } from './messaging/kafka/topics.port.js';
import { SHUTDOWN_DEADLINE_MS, startWorker } from './worker.js';

function readConfig(): AppConfig {
  try {
    const config = loadConfig(process.env);
    // The database URL's sslmode and CA file are checked now, with the rest of the
    // configuration, not only when the database is first opened (after Kafka's check).
    postgresConnection(config);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  // The worker bounds its own heap (~430 MB RSS under load with V8's own growth factor):
  // heap ~ live x (1 + HEAP_GROWTH_PERCENT %), and what is live is bounded by MAX_IN_FLIGHT
  // and MAX_IN_FLIGHT_BYTES.
  limitHeapGrowth(config.HEAP_GROWTH_PERCENT);
  const logger = createLogger({ level: config.LOG_LEVEL });
  // Signals are handled from the first moment: one that arrives while the worker is still
  // starting (joining the consumer group) shuts it down as soon as it has started.
  const starting = startWorker(config, logger);
  const stop = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'signal received');
    const deadline = setTimeout(() => {
      logger.error('shutdown took longer than 30 s; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    starting
      .then((worker) => worker.shutdown())
      .then(
        () => process.exit(process.exitCode ?? 0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const worker = await starting;
  worker.onCrash((error) => {
    // The Kafka client gave up for good: exit non-zero so that the supervisor restarts us.
    logger.fatal({ err: error }, 'order consumer crashed; shutting down');
    process.exitCode = 1;
    stop('SIGTERM');
  });
}

main().catch((error: unknown) => {
  if (error instanceof TopicsMissingError) {
    for (const line of error.lines()) console.error(`payflow-bridge: ${line}`);
    process.exit(1);
  }
  // One line, whatever failed: the Kafka access errors (kafka-security.ts) already say what
  // was refused and with which identity, never with a secret.
  const message = error instanceof Error ? error.message : String(error);
  console.error(`payflow-bridge failed to start: ${message.replace(/\s*\n\s*/g, ' ')}`);
  process.exit(1);
});
