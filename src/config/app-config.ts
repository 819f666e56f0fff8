/**
 * The worker's configuration: read from the environment once, at boot, into a typed object.
 * Nothing else in the program reads process.env. A bad value stops start-up with one line
 * that names the variable and what is wrong, and never echoes a secret's value.
 */
import { validateCronExpression } from 'cron';
import { z } from 'zod';
import { ValidationError } from '../common/app-error.js';
import { isTimeZone } from '../common/calendar.js';

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const httpUrl = z
  .string()
  .url({ message: 'must be an absolute URL' })
  .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http(s) URL' })
  .transform((value) => value.replace(/\/+$/, ''));

const positiveInt = z.coerce.number().int().positive();

/** Durations are milliseconds, or a number with a unit: 500ms, 30s, 5m, 1h, 8d. */
const duration = z.string().transform((value, ctx) => {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!match) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a duration such as 500ms, 30s, 5m, 1h or 8d',
    });
    return z.NEVER;
  }
  const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms'] ?? 1;
  return Number(match[1]) * factor;
});

/** Sizes are bytes, or a number with a binary unit: 512KiB, 32MiB, 1GiB. */
const byteSize = z.string().transform((value, ctx) => {
  const match = /^(\d+)\s*(B|KiB|MiB|GiB)?$/.exec(value.trim());
  if (!match || Number(match[1]) === 0) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a positive size in bytes, or with KiB, MiB or GiB (e.g. 32MiB)',
    });
    return z.NEVER;
  }
  const factor = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[match[2] ?? 'B'] ?? 1;
  return Number(match[1]) * factor;
});

/**
 * Default bound on the bytes of order events held at once (MAX_IN_FLIGHT_BYTES), sized for
 * the image's 192 MB V8 heap (--max-old-space-size=192). Ordinary events are a few KiB, so
 * MAX_IN_FLIGHT (256) binds long before this does; it is there for bursts of
 * `order.document_attached`, whose base64 documents make events of megabytes. A held event
 * costs its raw bytes (a Buffer, outside the heap but in the container's memory) and, while
 * its handler runs, about twice that on the heap (the parsed JSON string, the request body
 * sent to Payflow). 32 MiB held is then at most ~64 MiB of heap for events, a third of
 * 192 MB, leaving the rest for the fetch buffer (kafkajs maxBytes 10 MiB), the outbox, the
 * webhook receiver and Nest itself; and it still admits six 5 MB documents at once, so one
 * large upload does not stall the orders behind it. An event larger than the bound is
 * still taken when nothing else is held.
 */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 32 * 1024 * 1024;

export const envSchema = z.object({
  NODE_ENV: z.string().default('production'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' })
    .default('postgres://postgres@127.0.0.1:5432/payflow_bridge'),
  DB_MIGRATE: boolean.default(true),
  DB_POOL_SIZE: positiveInt.default(20),

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
  KAFKA_SESSION_TIMEOUT: duration.default(30_000),
  /**
   * Idempotent producer (the default): the broker drops the producer's own retried
   * duplicates and keeps order with 5 requests in flight. Turn it off only for a broker that
   * refuses InitProducerId (an ACL without IdempotentWrite, a broker older than 0.11, or
   * librdkafka's mock cluster of the demo); then 1 request is in flight.
   */
  KAFKA_PRODUCER_IDEMPOTENT: boolean.default(true),
  /** Fetch long-poll: how long a broker may hold a fetch that found nothing new. */
  KAFKA_FETCH_MAX_WAIT: duration.default(1_000),
  TOPIC_ORDERS: z.string().min(1).default('erp.orders.v1'),
  TOPIC_PAYMENT_STATUS: z.string().min(1).default('payflow.payment-status.v1'),
  TOPIC_SETTLEMENTS: z.string().min(1).default('payflow.settlements.v1'),
  MAX_IN_FLIGHT: positiveInt.default(256),
  /** Bytes of order events held at once, beside MAX_IN_FLIGHT (see DEFAULT_MAX_IN_FLIGHT_BYTES). */
  MAX_IN_FLIGHT_BYTES: byteSize.default(DEFAULT_MAX_IN_FLIGHT_BYTES),
  /** key: different orders of a partition in parallel; partition: one event per partition at a time. */
  ORDER_SEQUENCING: z
    .enum(['key', 'partition'], { message: 'must be key or partition' })
    .default('key'),
  RETRY_MAX_ATTEMPTS: positiveInt.default(10),
  RETRY_MAX_DURATION: duration.default(15 * 60_000),

  PAYFLOW_BASE_URL: httpUrl,
  PAYFLOW_PARTNER_BASE_URL: httpUrl,
  PAYFLOW_TOKEN_URL: httpUrl.optional(),
  PAYFLOW_CLIENT_ID: z.string().min(1, { message: 'is required' }),
  PAYFLOW_CLIENT_SECRET: z.string().min(1, { message: 'is required' }),
  PAYFLOW_CONNECT_TIMEOUT: duration.default(5_000),
  PAYFLOW_REQUEST_TIMEOUT: duration.default(30_000),
  /**
   * Connections to Payflow at once. Unset: MAX_IN_FLIGHT (loadConfig), since every event in
   * flight may be in a call; fewer made calls wait for a connection inside the process.
   */
  PAYFLOW_MAX_CONNECTIONS: positiveInt.optional(),
  /** How uploadDocument sends a document: JSON with base64 content, or multipart/form-data. */
  PAYFLOW_DOCUMENT_UPLOAD: z
    .enum(['json', 'multipart'], { message: 'must be json or multipart' })
    .default('json'),

  WEBHOOK_PUBLIC_BASE_URL: httpUrl.refine((value) => value.startsWith('https://'), {
    message: 'must be an https:// URL (Payflow never calls plain http)',
  }),
  WEBHOOK_RATE_LIMIT_PER_SECOND: positiveInt.default(20),
  WEBHOOK_RATE_LIMIT_BURST: positiveInt.default(40),
  WEBHOOK_AUTH_CACHE_SIZE: positiveInt.default(100_000),
  WEBHOOK_INBOX_RETENTION: duration
    .default(8 * 24 * 3_600_000)
    .refine((ms) => ms >= 7 * 24 * 3_600_000, {
      message: 'must be at least 7d (longer than Payflow retries a webhook)',
    }),
  /**
   * New webhooks wake the processor of the replica that stored them at once; this poll
   * only finds deferred retries (back-off from 5 s) and rows of a replica that died (their
   * 120 s lease), so it need not cost an idle worker one transaction a second.
   */
  WEBHOOK_PROCESSING_POLL_INTERVAL: duration.default(5_000),
  RECONCILE_ENABLED: boolean.default(true),
  RECONCILE_INTERVAL: duration.default(5 * 60_000),
  RECONCILE_RATE_PER_SECOND: positiveInt.default(20),
  RECONCILE_CONCURRENCY: positiveInt.default(4),
  HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HTTP_HOST: z.string().default('0.0.0.0'),
  TLS_CERT_FILE: z.string().min(1).optional(),
  TLS_KEY_FILE: z.string().min(1).optional(),

  SETTLEMENT_CRON: z
    .string()
    .trim()
    .refine((value) => validateCronExpression(value).valid, {
      message: 'must be a cron expression such as "0 30 2 * * *" (seconds first)',
    })
    .default('0 30 2 * * *'),
  SETTLEMENT_TIMEZONE: z
    .string()
    .refine(isTimeZone, { message: 'must be an IANA time zone such as Europe/Oslo' })
    .default('Europe/Oslo'),
  /** Run the nightly settlement pull in this process (the CLI pulls by hand either way). */
  SETTLEMENT_ENABLED: boolean.default(true),
  /** The nightly run also asks again for this many of the latest pulled nights (0 = none). */
  SETTLEMENT_RECHECK_NIGHTS: z.coerce.number().int().min(0).max(31).default(0),

  /** OpenTelemetry: unset, no spans are exported (the trace headers still propagate). */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default('payflow-bridge'),
});

export type AppConfig = Omit<z.output<typeof envSchema>, 'PAYFLOW_MAX_CONNECTIONS'> & {
  readonly PAYFLOW_MAX_CONNECTIONS: number;
};

export class ConfigError extends ValidationError {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super('CONFIG.INVALID', `Invalid configuration: ${variable} ${problem}`, {
      metadata: { variable },
    });
  }
}

/** The variables that are set: empty strings count as unset, as shells and compose files mean them. */
export function setVariables(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    ),
  );
}

/**
 * Parses set variables with `schema`; throws a ConfigError whose message is one line
 * naming the first variable that is wrong ("is required" when it is missing).
 */
export function parseVariables<S extends z.ZodType>(
  schema: S,
  variables: Readonly<Record<string, string>>,
): z.output<S> {
  const result = schema.safeParse(variables);
  if (!result.success) {
    const issue = result.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    const problem =
      issue === undefined
        ? 'is invalid'
        : issue.code === 'invalid_type' && variables[variable] === undefined
          ? 'is required'
          : issue.message;
    // zod's messages describe the rule, never the value, so no secret can leak through them.
    throw new ConfigError(variable, problem);
  }
  return result.data;
}

/** Parses the environment; throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): AppConfig {
  const config = parseVariables(envSchema, setVariables(env));
  if ((config.TLS_CERT_FILE === undefined) !== (config.TLS_KEY_FILE === undefined)) {
    throw new ConfigError(
      config.TLS_CERT_FILE === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE',
      'must be set together with its pair (TLS_CERT_FILE and TLS_KEY_FILE)',
    );
  }
  return {
    ...config,
    PAYFLOW_MAX_CONNECTIONS: config.PAYFLOW_MAX_CONNECTIONS ?? config.MAX_IN_FLIGHT,
  };
}

const databaseEnvSchema = envSchema.pick({
  DATABASE_URL: true,
  DB_POOL_SIZE: true,
  DB_MIGRATE: true,
});
export type DatabaseConfig = z.output<typeof databaseEnvSchema>;

/** The database part alone, for tools that need nothing else (migrations, the TypeORM CLI). */
export function loadDatabaseConfig(
  env: Readonly<Record<string, string | undefined>>,
): DatabaseConfig {
  return parseVariables(databaseEnvSchema, setVariables(env));
}
