/**
 * Where the variables come from: the set ones of the environment, the secrets read from
 * `<NAME>_FILE`, and the one parse that names the first variable that is wrong.
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { fileErrorCode } from '../errors/file-error.js';
import { ConfigError } from './config-error.js';

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
