/**
 * The worker's configuration: read from the environment once, at boot, into a typed object.
 * Nothing else in the program reads process.env. A bad value stops start-up with one line
 * that names the variable and what is wrong, and never echoes a secret's value.
 */
import { readFileSync } from 'node:fs';
import { validateCronExpression } from 'cron';
import { z } from 'zod';
import { ValidationError } from '../common/app-error.js';
import { fileErrorCode } from '../common/file-error.js';
import { isTimeZone } from '../common/calendar.js';
import {
  CLEAR_TEXT_URL_MESSAGE,
  isClearTextToRemote,
  kafkaSaslInClear,
  managementInClear,
  type ClearTextViolation,
} from './transport-security.js';

const boolean = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const httpUrl = z
  .string()
  .url({ message: 'must be an absolute URL' })
  .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http(s) URL' })
  .transform((value) => value.replace(/\/+$/, ''));

/** An http(s) URL that carries secrets: https, or plain http to a loopback host only. */
const httpsUnlessLoopback = httpUrl.refine((value) => !isClearTextToRemote(value), {
  message: CLEAR_TEXT_URL_MESSAGE,
});

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

/** A path to a file (its content is read when the part that needs it starts). */
const filePath = z.string().trim().min(1);

export const KAFKA_SASL_MECHANISMS = [
  'plain',
  'scram-sha-256',
  'scram-sha-512',
  'oauthbearer',
] as const;
export type KafkaSaslMechanism = (typeof KAFKA_SASL_MECHANISMS)[number];

/**
 * The secrets that may come from a file (`<NAME>_FILE`, the Docker and Kubernetes
 * convention; CONTRACT §9).
 */
export const FILE_SECRETS = [
  'PAYFLOW_CLIENT_SECRET',
  'KAFKA_SASL_PASSWORD',
  'KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET',
  'DATABASE_PASSWORD',
  'CONSOLE_TOKEN',
  'CONSOLE_OIDC_CLIENT_SECRET',
] as const;
export type FileSecret = (typeof FILE_SECRETS)[number];

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
  /** PEM CA that signs Postgres's certificate (sslmode verify-ca / verify-full). */
  DATABASE_SSL_CA_FILE: filePath.optional(),
  /** Overrides the password of DATABASE_URL, so that the URL itself holds no secret. */
  DATABASE_PASSWORD: z.string().min(1).optional(),
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
  MAX_IN_FLIGHT: positiveInt.default(256),
  /** Bytes of order events held at once, beside MAX_IN_FLIGHT (see DEFAULT_MAX_IN_FLIGHT_BYTES). */
  MAX_IN_FLIGHT_BYTES: byteSize.default(DEFAULT_MAX_IN_FLIGHT_BYTES),
  /**
   * V8's old generation grows by this share over what survived its last full collection
   * (0: V8's own factor, up to 4x with a large heap limit). See src/main.ts.
   */
  HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(400).default(100),
  /** key: different orders of a partition in parallel; partition: one event per partition at a time. */
  ORDER_SEQUENCING: z
    .enum(['key', 'partition'], { message: 'must be key or partition' })
    .default('key'),
  RETRY_MAX_ATTEMPTS: positiveInt.default(10),
  RETRY_MAX_DURATION: duration.default(15 * 60_000),

  /** https, or http to a loopback host only (transport-security.ts; the sandbox). */
  PAYFLOW_BASE_URL: httpsUnlessLoopback,
  PAYFLOW_PARTNER_BASE_URL: httpsUnlessLoopback,
  PAYFLOW_TOKEN_URL: httpsUnlessLoopback.optional(),
  PAYFLOW_CLIENT_ID: z.string().min(1, { message: 'is required' }),
  PAYFLOW_CLIENT_SECRET: z.string().min(1, { message: 'is required' }),
  /**
   * Where PAYFLOW_CLIENT_SECRET was read from, when it came from a file: the client reads
   * it again when the token endpoint says invalid_client (a rotated secret).
   */
  PAYFLOW_CLIENT_SECRET_FILE: filePath.optional(),
  PAYFLOW_CONNECT_TIMEOUT: duration.default(5_000),
  PAYFLOW_REQUEST_TIMEOUT: duration.default(30_000),
  /**
   * How long after a request left Payflow may still apply it. A read of Payflow that shows a
   * call "not applied" is trusted only once this has passed since the call's send mark.
   * Unset: DEFAULT_LATE_EFFECT_WINDOW_MS, or twice PAYFLOW_REQUEST_TIMEOUT when that is
   * longer (loadConfig); set: at least twice PAYFLOW_REQUEST_TIMEOUT.
   */
  PAYFLOW_LATE_EFFECT_WINDOW: duration.optional(),
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
   * Personal data of orders untouched for longer is erased, daily (CONTRACT §10,
   * docs/privacy.md); also the retention.ms `topics create` gives the `.dlq` topic.
   */
  RETENTION_PERSONAL_DATA: duration
    .default(90 * 86_400_000)
    .refine((ms) => ms >= 86_400_000, { message: 'must be at least 1d' }),
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
  /** The public listener's limits (webhooks only): headers and whole-request time-outs. */
  HTTP_HEADERS_TIMEOUT: duration.default(10_000),
  HTTP_REQUEST_TIMEOUT: duration.default(30_000),
  /** Connections one address may hold open at once on the public listener. */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: positiveInt.default(64),
  /** The private operations listener: /metrics, /health/live, /health/ready, /console. */
  MANAGEMENT_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  MANAGEMENT_HOST: z.string().min(1).default('0.0.0.0'),
  /** TLS on the management port (PEM certificate chain and key); set together or not at all. */
  MANAGEMENT_TLS_CERT_FILE: filePath.optional(),
  MANAGEMENT_TLS_KEY_FILE: filePath.optional(),
  /**
   * A TLS-terminating proxy stands in front of the management port: the console may run on
   * plain HTTP bound to an address other than loopback, and its cookies are Secure.
   */
  CONSOLE_BEHIND_TLS_PROXY: boolean.default(false),
  /** Unset: no console. Set: /console on the management port, signed in with this token. */
  CONSOLE_TOKEN: z
    .string()
    .min(16, { message: 'must be at least 16 characters (a long random token)' })
    .optional(),
  /**
   * Console sign-in through the organization's OpenID provider (CONTRACT §10): its issuer
   * URL, this console's client id and secret, and the ID token claim that lists the roles
   * (`viewer`, `operator`). The first three are set together or not at all.
   */
  CONSOLE_OIDC_ISSUER: z
    .string()
    .url({ message: 'must be an absolute URL' })
    // Kept exactly as given: the provider's discovery document must name the same issuer.
    .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http(s) URL' })
    .refine((value) => !isClearTextToRemote(value), { message: CLEAR_TEXT_URL_MESSAGE })
    .optional(),
  CONSOLE_OIDC_CLIENT_ID: z.string().min(1).optional(),
  CONSOLE_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  CONSOLE_OIDC_ROLES_CLAIM: z.string().min(1).default('roles'),

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

export type AppConfig = Omit<
  z.output<typeof envSchema>,
  'PAYFLOW_MAX_CONNECTIONS' | 'PAYFLOW_LATE_EFFECT_WINDOW'
> & {
  readonly PAYFLOW_MAX_CONNECTIONS: number;
  readonly PAYFLOW_LATE_EFFECT_WINDOW: number;
};

/**
 * PAYFLOW_LATE_EFFECT_WINDOW's default, 3 minutes: six times the default request time-out,
 * and above the 60 s that gateways and load balancers commonly hold a request, plus the
 * time a server may still work on it after its gateway gave up (docs/assumptions.md,
 * "Late effects").
 */
export const DEFAULT_LATE_EFFECT_WINDOW_MS = 3 * 60_000;

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

/** A secret file's content: the whole file, one trailing newline (LF or CRLF) removed. */
export function secretFromFileContent(content: string): string {
  return content.replace(/\r?\n$/, '');
}

/**
 * Reads every `<NAME>_FILE` of FILE_SECRETS into `<NAME>`. Both set: a ConfigError naming
 * both. An unreadable or empty file: a ConfigError naming the variable and the file's error
 * code, never any content. `PAYFLOW_CLIENT_SECRET_FILE` stays in the result, so that the
 * client can read a rotated secret again.
 */
export function resolveSecretFiles(
  variables: Readonly<Record<string, string>>,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): Record<string, string> {
  const resolved: Record<string, string> = { ...variables };
  for (const name of FILE_SECRETS) {
    const fileVariable = `${name}_FILE`;
    const path = variables[fileVariable];
    if (path === undefined) continue;
    if (variables[name] !== undefined) {
      throw new ConfigError(
        `${name} and ${fileVariable}`,
        'are both set: set one of them (the secret itself, or the file that holds it)',
      );
    }
    let content: string;
    try {
      content = secretFromFileContent(readFile(path));
    } catch (error) {
      throw new ConfigError(
        fileVariable,
        `names a file that cannot be read (${fileErrorCode(error)})`,
      );
    }
    if (content === '') throw new ConfigError(fileVariable, 'names an empty file');
    resolved[name] = content;
  }
  return resolved;
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
  const config = parseVariables(envSchema, resolveSecretFiles(setVariables(env)));
  checkPair(config, 'TLS_CERT_FILE', 'TLS_KEY_FILE');
  checkConsoleOidc(config);
  checkKafkaSecurity(config);
  throwViolation(managementInClear(config));
  return {
    ...config,
    PAYFLOW_MAX_CONNECTIONS: config.PAYFLOW_MAX_CONNECTIONS ?? config.MAX_IN_FLIGHT,
    PAYFLOW_LATE_EFFECT_WINDOW: lateEffectWindow(config),
  };
}

/** The late-effect window: at least twice the request time-out (see the variable). */
export function lateEffectWindow(
  config: Pick<
    z.output<typeof envSchema>,
    'PAYFLOW_LATE_EFFECT_WINDOW' | 'PAYFLOW_REQUEST_TIMEOUT'
  >,
): number {
  const least = 2 * config.PAYFLOW_REQUEST_TIMEOUT;
  const window = config.PAYFLOW_LATE_EFFECT_WINDOW;
  if (window === undefined) return Math.max(DEFAULT_LATE_EFFECT_WINDOW_MS, least);
  if (window < least) {
    throw new ConfigError(
      'PAYFLOW_LATE_EFFECT_WINDOW',
      `must be at least twice PAYFLOW_REQUEST_TIMEOUT (${least} ms)`,
    );
  }
  return window;
}

/** A broken rule of transport-security.ts as the one-line ConfigError. */
function throwViolation(violation: ClearTextViolation | undefined): void {
  if (violation !== undefined) throw new ConfigError(violation.variable, violation.problem);
}

function checkPair<C extends object>(
  config: C,
  first: keyof C & string,
  second: keyof C & string,
): void {
  if ((config[first] === undefined) !== (config[second] === undefined)) {
    throw new ConfigError(
      config[first] === undefined ? first : second,
      `must be set together with its pair (${first} and ${second})`,
    );
  }
}

/** The console's OpenID provider: issuer, client id and client secret, all three or none. */
export function checkConsoleOidc(
  config: Pick<
    z.output<typeof envSchema>,
    'CONSOLE_OIDC_ISSUER' | 'CONSOLE_OIDC_CLIENT_ID' | 'CONSOLE_OIDC_CLIENT_SECRET'
  >,
): void {
  const names = [
    'CONSOLE_OIDC_ISSUER',
    'CONSOLE_OIDC_CLIENT_ID',
    'CONSOLE_OIDC_CLIENT_SECRET',
  ] as const;
  const set = names.filter((name) => config[name] !== undefined);
  const missing = names.find((name) => config[name] === undefined);
  if (set.length > 0 && missing !== undefined) {
    throw new ConfigError(missing, `is required with ${set.join(', ')} (OpenID sign-in)`);
  }
}

/** The variables that say how to reach the brokers securely (TLS, SASL). */
export type KafkaSecurityConfig = Pick<
  z.output<typeof envSchema>,
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

const databaseEnvSchema = envSchema.pick({
  DATABASE_URL: true,
  DATABASE_SSL_CA_FILE: true,
  DATABASE_PASSWORD: true,
  DB_POOL_SIZE: true,
  DB_MIGRATE: true,
});
export type DatabaseConfig = z.output<typeof databaseEnvSchema>;

/** The database part alone, for tools that need nothing else (migrations, the TypeORM CLI). */
export function loadDatabaseConfig(
  env: Readonly<Record<string, string | undefined>>,
): DatabaseConfig {
  return parseVariables(databaseEnvSchema, resolveSecretFiles(setVariables(env)));
}
