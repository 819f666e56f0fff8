/**
 * kafkajs client factory. kafkajs is imported only inside src/messaging (see
 * messaging.ports.ts): the rest of the program uses MessageProducer and the order-events
 * transport.
 */
import { Kafka, logLevel, type LogEntry, type logCreator } from 'kafkajs';
import type { AppLogger } from '../common/logger.js';

export interface KafkaClientOptions {
  /** Bootstrap list, host:port (KAFKA_BROKERS). */
  readonly brokers: readonly string[];
  /** KAFKA_CLIENT_ID. */
  readonly clientId: string;
  /** TCP connect time-out (kafkajs default 1000 ms is short for cloud brokers). */
  readonly connectionTimeoutMs?: number;
  /** Time-out of one request. */
  readonly requestTimeoutMs?: number;
  /** kafkajs' own retries of broker operations (connect, metadata, commit, produce). */
  readonly retry?: {
    readonly retries?: number;
    readonly initialRetryTimeMs?: number;
    readonly maxRetryTimeMs?: number;
  };
  /** kafkajs log lines go here (info is logged at debug: kafkajs is chatty). */
  readonly logger?: AppLogger;
}

/** The client options of the worker's configuration. */
export function kafkaClientOptionsFromConfig(
  config: { readonly KAFKA_BROKERS: readonly string[]; readonly KAFKA_CLIENT_ID: string },
  logger?: AppLogger,
): KafkaClientOptions {
  return {
    brokers: config.KAFKA_BROKERS,
    clientId: config.KAFKA_CLIENT_ID,
    ...(logger === undefined ? {} : { logger }),
  };
}

/** kafkajs log entries into pino; never logs message contents (kafkajs does not either). */
function pinoLogCreator(logger: AppLogger | undefined): logCreator {
  return () =>
    ({ namespace, level, log }: LogEntry): void => {
      if (logger === undefined) return;
      const { message, timestamp: _timestamp, logger: _name, ...extra } = log;
      const fields = { kafkajs: namespace, ...extra };
      switch (level) {
        case logLevel.ERROR:
          // Per-response errors (e.g. "the group is rebalancing" during every rebalance) are
          // handled by kafkajs itself; what it cannot handle shows up elsewhere as an error.
          if (namespace === 'Connection') logger.warn(fields, message);
          else logger.error(fields, message);
          break;
        case logLevel.WARN:
          // Said on every idempotent producer with finite retries, which we want: a send
          // must fail in bounded time so the outbox relay can retry it (kafka.producer.ts).
          if (message.startsWith('Limiting retries for the idempotent producer')) {
            logger.debug(fields, message);
          } else logger.warn(fields, message);
          break;
        case logLevel.INFO:
          logger.debug(fields, message);
          break;
        case logLevel.DEBUG:
        case logLevel.NOTHING:
        default:
          logger.trace(fields, message);
          break;
      }
    };
}

export function createKafkaClient(options: KafkaClientOptions): Kafka {
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: options.connectionTimeoutMs ?? 5_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: {
      retries: options.retry?.retries ?? 8,
      initialRetryTime: options.retry?.initialRetryTimeMs ?? 300,
      maxRetryTime: options.retry?.maxRetryTimeMs ?? 30_000,
    },
    logLevel: logLevel.INFO,
    logCreator: pinoLogCreator(options.logger),
  });
}
