/** The one error a bad configuration stops start-up with, and the small checks that throw it. */
import { ValidationError } from '../errors/app-error.js';
import type { ClearTextViolation } from './transport-security.js';

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

/** A broken rule of transport-security.ts as the one-line ConfigError. */
export function throwViolation(violation: ClearTextViolation | undefined): void {
  if (violation !== undefined) throw new ConfigError(violation.variable, violation.problem);
}

export function checkPair<C extends object>(
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
