/**
 * The operator CLI's configuration: the part of the worker's environment it uses, and
 * nothing else, so that an operator can run it without the Payflow or webhook variables.
 * Same variables, same validation and same one-line errors as the worker.
 */
import { z } from 'zod';
import {
  checkKafkaSecurity,
  envSchema,
  lateEffectWindow,
  parseVariables,
  resolveSecretFiles,
  setVariables,
} from '../config/app-config.js';

const cliEnvSchema = envSchema
  .pick({
    NODE_ENV: true,
    DATABASE_URL: true,
    DATABASE_SSL_CA_FILE: true,
    DATABASE_PASSWORD: true,
    DB_POOL_SIZE: true,
    KAFKA_BROKERS: true,
    KAFKA_CLIENT_ID: true,
    KAFKA_SSL: true,
    KAFKA_SSL_CA_FILE: true,
    KAFKA_SSL_CERT_FILE: true,
    KAFKA_SSL_KEY_FILE: true,
    KAFKA_SASL_MECHANISM: true,
    KAFKA_SASL_USERNAME: true,
    KAFKA_SASL_PASSWORD: true,
    KAFKA_SASL_OAUTHBEARER_TOKEN_URL: true,
    KAFKA_SASL_OAUTHBEARER_CLIENT_ID: true,
    KAFKA_SASL_OAUTHBEARER_CLIENT_SECRET: true,
    KAFKA_SASL_OAUTHBEARER_SCOPE: true,
    KAFKA_PRODUCER_IDEMPOTENT: true,
    TOPIC_ORDERS: true,
    TOPIC_PAYMENT_STATUS: true,
    TOPIC_SETTLEMENTS: true,
    // `topics create` gives the .dlq topic this retention (docs/privacy.md).
    RETENTION_PERSONAL_DATA: true,
    SETTLEMENT_TIMEZONE: true,
    // `settlements reconcile`: when a paid payment with no line is not_settled.
    SETTLEMENT_EXPECTED_WITHIN: true,
    // `in-doubt resolve --not-created` waits out the late-effect window, as the worker does.
    PAYFLOW_REQUEST_TIMEOUT: true,
    PAYFLOW_LATE_EFFECT_WINDOW: true,
  })
  .extend({
    // The CLI prints its own output; its log lines (stderr) are warnings and errors.
    LOG_LEVEL: envSchema.shape.LOG_LEVEL.unwrap().default('warn'),
  });

/** The Payflow variables, validated only by the commands that call Payflow
 * (`reconcile`, `settlements pull`). */
const cliPayflowEnvSchema = envSchema
  .pick({
    PAYFLOW_BASE_URL: true,
    PAYFLOW_PARTNER_BASE_URL: true,
    PAYFLOW_TOKEN_URL: true,
    PAYFLOW_CLIENT_ID: true,
    PAYFLOW_CLIENT_SECRET: true,
    PAYFLOW_CLIENT_SECRET_FILE: true,
    PAYFLOW_CONNECT_TIMEOUT: true,
    PAYFLOW_REQUEST_TIMEOUT: true,
  })
  .extend({
    // The CLI's calls are few and one at a time; it has no MAX_IN_FLIGHT to follow.
    PAYFLOW_MAX_CONNECTIONS: envSchema.shape.PAYFLOW_MAX_CONNECTIONS.unwrap().default(8),
  });

export type CliPayflowConfig = z.output<typeof cliPayflowEnvSchema>;

export type CliConfig = Omit<z.output<typeof cliEnvSchema>, 'PAYFLOW_LATE_EFFECT_WINDOW'> & {
  /** As the worker's: the variable, or its default (lateEffectWindow). */
  readonly PAYFLOW_LATE_EFFECT_WINDOW: number;
  /** The PAYFLOW_* variables as given, checked by `loadCliPayflowConfig` when a command needs them. */
  readonly payflowEnv: Readonly<Record<string, string>>;
};

/** Parses the environment; throws a ConfigError whose message is one line naming the variable. */
export function loadCliConfig(env: Readonly<Record<string, string | undefined>>): CliConfig {
  const cleaned = resolveSecretFiles(setVariables(env));
  const payflowEnv = Object.fromEntries(
    Object.entries(cleaned).filter(([name]) => name.startsWith('PAYFLOW_')),
  );
  const config = parseVariables(cliEnvSchema, cleaned);
  checkKafkaSecurity(config);
  return { ...config, PAYFLOW_LATE_EFFECT_WINDOW: lateEffectWindow(config), payflowEnv };
}

/** The Payflow client's variables, for the commands that call Payflow; a ConfigError otherwise. */
export function loadCliPayflowConfig(config: Pick<CliConfig, 'payflowEnv'>): CliPayflowConfig {
  return parseVariables(cliPayflowEnvSchema, config.payflowEnv);
}
