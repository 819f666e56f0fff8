/**
 * Base of every error payflow-bridge raises on purpose.
 *
 * - `code` is a stable string that callers, logs and dead-letter headers can rely on.
 * - `transient` says whether trying the same thing again later may succeed; the one place
 *   that decides between retry and dead letter reads it (and nothing else).
 * - `metadata` carries non-sensitive facts only: ids, statuses, counts. Never secrets,
 *   tokens, emails or phone numbers.
 */
export type ErrorMetadata = Readonly<Record<string, string | number | boolean | null | undefined>>;

export abstract class AppError extends Error {
  abstract readonly code: string;
  abstract readonly transient: boolean;
  readonly metadata: ErrorMetadata;

  constructor(message: string, options: { cause?: unknown; metadata?: ErrorMetadata } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.metadata = options.metadata ?? {};
  }

  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      transient: this.transient,
      metadata: this.metadata,
    };
  }
}

/** Input that can never succeed as given: bad configuration, invalid event, failed mapping. */
export class ValidationError extends AppError {
  readonly transient = false;
  constructor(
    readonly code: string,
    message: string,
    options: { cause?: unknown; metadata?: ErrorMetadata } = {},
  ) {
    super(message, options);
  }
}

/** Formats any thrown value as one line, without stack, for logs and headers. */
export function describeError(error: unknown): string {
  if (error instanceof AppError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
