/**
 * The operator CLI's configuration: the part of the worker's environment it uses, and
 * nothing else, so that an operator can run it without the Payflow or webhook variables.
 * Same variables, same validation and same one-line errors as the worker.
 */
import { z } from 'zod';
import { ConfigError, envSchema } from '../config/app-config.js';

const cliEnvSchema = envSchema
  .pick({
    NODE_ENV: true,
    DATABASE_URL: true,
    DB_POOL_SIZE: true,
    KAFKA_BROKERS: true,
    KAFKA_CLIENT_ID: true,
    TOPIC_ORDERS: true,
    TOPIC_PAYMENT_STATUS: true,
  })
  .extend({
    // The CLI prints its own output; its log lines (stderr) are warnings and errors.
    LOG_LEVEL: envSchema.shape.LOG_LEVEL.unwrap().default('warn'),
  });

export type CliConfig = z.output<typeof cliEnvSchema>;

/** Parses the environment; throws a ConfigError whose message is one line naming the variable. */
export function loadCliConfig(env: Readonly<Record<string, string | undefined>>): CliConfig {
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const result = cliEnvSchema.safeParse(cleaned);
  if (!result.success) {
    const issue = result.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    const problem =
      issue === undefined
        ? 'is invalid'
        : issue.code === 'invalid_type' && cleaned[variable] === undefined
          ? 'is required'
          : issue.message;
    throw new ConfigError(variable, problem);
  }
  return result.data;
}
