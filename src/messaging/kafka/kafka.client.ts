/**
 * kafkajs client factory. kafkajs is imported only inside src/messaging (see
 * messaging.ports.ts): the rest of the program uses MessageProducer and the inbound-events
 * transport.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Kafka, logLevel, type LogEntry, type logCreator } from 'kafkajs';
import type { AppLogger } from '../../logging/logger.js';
import type { KafkaSecurityConfig } from '../../config/app-config.js';
import { OAuthBearerTokenSource, type OAuthBearerSettings } from '../security/kafka-oauthbearer.js';
import { isClosedByBrokers, securityProtocolMismatch } from '../security/kafka-access.js';
import {
  describeKafkaIdentity,
  explainKafkaAccessError,
  kafkaSecurityFromConfig,
  kafkajsSecurity,
  type KafkaSecurityOptions,
} from '../security/kafka-security.js';

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
  /** TLS and SASL (kafka-security.ts); absent: PLAINTEXT, no authentication. */
  readonly security?: KafkaSecurityOptions;
}

/** The variables the Kafka connection is built from. */
export type KafkaConnectionConfig = KafkaSecurityConfig & {
  readonly KAFKA_BROKERS: readonly string[];
  readonly KAFKA_CLIENT_ID: string;
};

/**
 * One OAUTHBEARER token source per configuration object: the worker builds its admin,
 * producer and consumer from one configuration, and they share one cached token rather than
 * each asking the token endpoint for its own.
 */
const tokenSources = new WeakMap<object, OAuthBearerTokenSource>();

/**
 * The client options of a configuration (the worker's or the CLI's): brokers, client id, and
 * TLS/SASL with the CA, certificate and key files read now (ConfigError naming the variable
 * when one cannot be read).
 */
export function kafkaClientOptionsFromConfig(
  config: KafkaConnectionConfig,
  logger?: AppLogger,
): KafkaClientOptions {
  const security = kafkaSecurityFromConfig(config, {
    tokenSource: (settings: OAuthBearerSettings) => {
      const existing = tokenSources.get(config);
      if (existing !== undefined) return existing;
      const created = new OAuthBearerTokenSource(settings);
      tokenSources.set(config, created);
      return created;
    },
  });
  return {
    brokers: config.KAFKA_BROKERS,
    clientId: config.KAFKA_CLIENT_ID,
    ...(security.tls === undefined && security.sasl === undefined ? {} : { security }),
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
    ...kafkajsSecurity(options.security ?? {}),
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

/** How often the first contact is tried when the brokers close it at once. */
const CLOSED_ATTEMPTS = 4;

/**
 * The first contact, made without kafkajs' retries: rejects with KafkaAccessError (one line,
 * no secret) when the brokers refuse us (credentials, SASL mechanism, TLS trust, client
 * certificate), or close every connection as soon as it opens (TLS or SASL expected but not
 * configured; tried CLOSED_ATTEMPTS times, a second apart). kafkajs retries TLS failures and
 * closed connections like any connection error, for minutes; this says at once what is
 * wrong. Anything else (a broker not up yet, a time-out) resolves: the caller's own client
 * retries those.
 */
export async function checkKafkaAccess(options: KafkaClientOptions): Promise<void> {
  const security = options.security ?? {};
  for (let attempt = 1; ; attempt += 1) {
    const error = await firstContact(options);
    if (error === undefined) return;
    const refused = explainKafkaAccessError(error, security);
    if (refused !== undefined) throw refused;
    if (!isClosedByBrokers(error)) {
      options.logger?.debug({ err: error }, 'Kafka access check: no answer yet; retrying later');
      return;
    }
    if (attempt === CLOSED_ATTEMPTS) {
      throw securityProtocolMismatch(describeKafkaIdentity(security), attempt);
    }
    await delay(1_000);
  }
}

/** One connection of an admin client and one Metadata request, without retries: what failed. */
async function firstContact(options: KafkaClientOptions): Promise<unknown> {
  // Its failures are reported by the caller, in one line: no kafkajs log lines of its own.
  const { logger: _quiet, ...quiet } = options;
  const admin = createKafkaClient({ ...quiet, retry: { retries: 0 } }).admin();
  try {
    await admin.connect();
    // A request past ApiVersions (which the brokers answer before authentication).
    await admin.describeCluster();
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
