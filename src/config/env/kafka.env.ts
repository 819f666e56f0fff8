/** KAFKA_*, TOPIC_*: the brokers, their TLS and SASL, the topics. */
import { z } from 'zod';
import { boolean, duration, filePath, httpsUnlessLoopback } from '../env-values.js';
import { checkPair, ConfigError, throwViolation } from '../config-error.js';
import { kafkaSaslInClear } from '../transport-security.js';

export const KAFKA_SASL_MECHANISMS = [
  'plain',
  'scram-sha-256',
  'scram-sha-512',
  'oauthbearer',
] as const;
export type KafkaSaslMechanism = (typeof KAFKA_SASL_MECHANISMS)[number];

export const kafkaEnv = z.object({
  KAFKA_BROKERS: z
    .string()
    .default('127.0.0.1:9092')
    .transform((value) =>
      value
        .split(',')
        .map((broker) => broker.trim())
        .filter(Boolean),
    )
    .refine((brokers) => brokers.length > 0 && brokers.every((b) => /^[^:\s]+:\d+$/.test(b)), {
      message: 'must be a comma-separated list of host:port',
    }),
  KAFKA_CLIENT_ID: z.string().min(1).default('payflow-bridge'),
  KAFKA_GROUP_ID: z.string().min(1).default('payflow-bridge'),
  /**
   * How long the group coordinator waits for a silent consumer (a SIGKILLed or frozen
   * replica) before it hands its partitions to the others: they are consumed again within
   * about this time plus 0-3.5 s (heartbeat 1/10 of it, rejoin, first fetch;
   * bench/results/scale.json). 10 s: three times faster than kafkajs' 30 s, and still
   * ten heartbeats (1 s each) that a busy event loop may miss before a live replica is
   * thrown out. The broker bounds it (group.min.session.timeout.ms, default 6 s).
   */
  KAFKA_SESSION_TIMEOUT: duration.default(10_000),
  /**
   * Idempotent producer (the default): the broker drops the producer's own retried
   * duplicates and keeps order with 5 requests in flight. Turn it off only for a broker that
   * refuses InitProducerId (an ACL without IdempotentWrite, a broker older than 0.11, or
   * librdkafka's mock cluster of the demo); then 1 request is in flight.
   */
  KAFKA_PRODUCER_IDEMPOTENT: boolean.default(true),
  /** Fetch long-poll: how long a broker may hold a fetch that found nothing new. */
  KAFKA_FETCH_MAX_WAIT: duration.default(1_000),
  /** TLS to the brokers. Certificates are always verified; no variable turns that off. */
  KAFKA_SSL: boolean.default(false),
  /** PEM file of the CA(s) that sign the brokers' certificates; unset: the system's CAs. */
  KAFKA_SSL_CA_FILE: filePath.optional(),
  /** Client certificate and key (PEM) for mutual TLS; set together or not at all. */
  KAFKA_SSL_CERT_FILE: filePath.optional(),
  KAFKA_SSL_KEY_FILE: filePath.optional(),
  KAFKA_SASL_MECHANISM: z
    .enum(KAFKA_SASL_MECHANISMS, {
      message: 'must be plain, scram-sha-256, scram-sha-512 or oauthbearer',
    })
    .optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  /** OAUTHBEARER: an OAuth 2.0 client-credentials token endpoint and the client's credentials. */
  KAFKA_SASL_OAUTHBEARER_TOKEN_URL: httpsUnlessLoopback.optional(),
  KAFKA_SASL_OAUTHBEARER_CLIENT_ID: z.string().min(1).optional(),
  KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: z.string().min(1).optional(),
  /**
   * Where KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET was read from, when it came from a file: each
   * token request reads it again, so a rotated secret needs no restart.
   */
  KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE: filePath.optional(),
  KAFKA_SASL_OAUTHBEARER_SCOPE: z.string().min(1).optional(),
  TOPIC_ORDERS: z.string().min(1).default('erp.orders.v1'),
  TOPIC_PAYMENT_STATUS: z.string().min(1).default('payflow.payment-status.v1'),
  TOPIC_SETTLEMENTS: z.string().min(1).default('payflow.settlements.v1'),
});

/** The variables that say how to reach the brokers securely (TLS, SASL). */
export type KafkaSecurityConfig = Pick<
  z.output<typeof kafkaEnv>,
  | 'KAFKA_SSL'
  | 'KAFKA_SSL_CA_FILE'
  | 'KAFKA_SSL_CERT_FILE'
  | 'KAFKA_SSL_KEY_FILE'
  | 'KAFKA_SASL_MECHANISM'
  | 'KAFKA_SASL_USERNAME'
  | 'KAFKA_SASL_PASSWORD'
  | 'KAFKA_SASL_OAUTHBEARER_TOKEN_URL'
  | 'KAFKA_SASL_OAUTHBEARER_CLIENT_ID'
  | 'KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET'
  | 'KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET_FILE'
  | 'KAFKA_SASL_OAUTHBEARER_SCOPE'
>;

/**
 * The Kafka security variables fit together: TLS files only with KAFKA_SSL, the client
 * certificate with its key, each SASL mechanism with exactly the credentials it uses, and
 * PLAIN or OAUTHBEARER only with KAFKA_SSL.
 */
export function checkKafkaSecurity(config: KafkaSecurityConfig): void {
  checkPair(config, 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE');
  if (!config.KAFKA_SSL) {
    for (const name of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE'] as const) {
      if (config[name] !== undefined) {
        throw new ConfigError(name, 'is set but KAFKA_SSL is not true (TLS files need TLS)');
      }
    }
  }
  const mechanism = config.KAFKA_SASL_MECHANISM;
  const password = ['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'] as const;
  const oauth = [
    'KAFKA_SASL_OAUTHBEARER_TOKEN_URL',
    'KAFKA_SASL_OAUTHBEARER_CLIENT_ID',
    'KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET',
  ] as const;
  const needed: readonly (keyof KafkaSecurityConfig)[] =
    mechanism === undefined ? [] : mechanism === 'oauthbearer' ? oauth : password;
  for (const name of needed) {
    if (config[name] === undefined) {
      throw new ConfigError(name, `is required with KAFKA_SASL_MECHANISM=${String(mechanism)}`);
    }
  }
  const unused = [...password, ...oauth, 'KAFKA_SASL_OAUTHBEARER_SCOPE' as const].filter(
    (name) =>
      config[name] !== undefined &&
      !needed.includes(name) &&
      !(mechanism === 'oauthbearer' && name === 'KAFKA_SASL_OAUTHBEARER_SCOPE'),
  );
  const first = unused[0];
  if (first !== undefined) {
    throw new ConfigError(
      first,
      mechanism === undefined
        ? 'is set but KAFKA_SASL_MECHANISM is not'
        : `is not used with KAFKA_SASL_MECHANISM=${mechanism}`,
    );
  }
  // PLAIN and OAUTHBEARER send their secret as it is: only over TLS (transport-security.ts).
  throwViolation(kafkaSaslInClear(config));
}
