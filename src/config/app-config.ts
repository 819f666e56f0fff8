/**
 * The worker's configuration: read from the environment once, at boot, into a typed object.
 * Nothing else in the program reads process.env. A bad value stops start-up with one line
 * that names the variable and what is wrong, and never echoes a secret's value.
 *
 * The variables are declared by area under env/ (database, kafka, pipeline, payflow,
 * webhooks, retention, reconcile, listeners, console, settlements); envSchema joins them
 * into the one schema that loadConfig parses, and the checks that span variables run here.
 */
import { z } from 'zod';
import { checkPair, throwViolation } from './config-error.js';
import { parseVariables, resolveSecretFiles, setVariables } from './env-source.js';
import { httpUrl } from './env-values.js';
import { checkConsoleOidc, consoleEnv } from './env/console.env.js';
import { databaseEnv, type DatabaseConfig } from './env/database.env.js';
import { checkKafkaSecurity, kafkaEnv } from './env/kafka.env.js';
import { listenersEnv } from './env/listeners.env.js';
import { lateEffectWindow, payflowEnv } from './env/payflow.env.js';
import { pipelineEnv } from './env/pipeline.env.js';
import { reconcileEnv } from './env/reconcile.env.js';
import { retentionEnv } from './env/retention.env.js';
import { settlementsEnv } from './env/settlements.env.js';
import { webhooksEnv } from './env/webhooks.env.js';
import { managementInClear } from './transport-security.js';

export { ConfigError } from './config-error.js';
export {
  parseVariables,
  resolveSecretFiles,
  secretFromFileContent,
  setVariables,
} from './env-source.js';
export type { DatabaseConfig } from './env/database.env.js';
export {
  checkKafkaSecurity,
  type KafkaSaslMechanism,
  type KafkaSecurityConfig,
} from './env/kafka.env.js';
export { lateEffectWindow } from './env/payflow.env.js';

export const envSchema = z.object({
  NODE_ENV: z.string().default('production'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ...databaseEnv.shape,
  ...kafkaEnv.shape,
  ...pipelineEnv.shape,
  ...payflowEnv.shape,
  ...webhooksEnv.shape,
  ...retentionEnv.shape,
  ...reconcileEnv.shape,
  ...listenersEnv.shape,
  ...consoleEnv.shape,
  ...settlementsEnv.shape,
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

/** The database part alone, for tools that need nothing else (migrations, the TypeORM CLI). */
export function loadDatabaseConfig(
  env: Readonly<Record<string, string | undefined>>,
): DatabaseConfig {
  return parseVariables(databaseEnv, resolveSecretFiles(setVariables(env)));
}
