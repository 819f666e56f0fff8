/**
 * Base of every error payflow-bridge raises on purpose.
 *
 * - `code` is a stable string that callers, logs and dead-letter headers can rely on.
 * - `transient` says whether trying the same thing again later may succeed.
 * - `deadLetterReason` (why an event that failed with it is dead-lettered at once),
 *   `retryAfterMs` (no retry sooner) and `waitsForOther` (a wait, not a failed try) are the
 *   rest of the retry decision's inputs. The one
 *   place that decides between retry and dead letter (src/messaging/transport/failure-policy.ts)
 *   reads these fields, nothing else.
 * - `metadata` carries non-sensitive facts only: ids, statuses, counts. Never secrets,
 *   tokens, emails or phone numbers.
 */
import { oneLine } from './one-line.js';

/** Why an event went to the dead-letter topic (CONTRACT §4), as `x-dlq-reason` says. */
export const DEAD_LETTER_REASONS = [
  'invalid_json',
  'invalid_event',
  'mapping_failed',
  'rejected_by_payflow',
  'retries_exhausted',
  'blocked_by_earlier_failure',
  'in_doubt',
  'supersede_refused',
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

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

  /**
   * Why an event that failed with this error goes to the dead-letter topic at once, when
   * the error knows (the dead-letter errors, a permanent Payflow rejection). Undefined: the
   * failure policy decides from `transient` alone.
   */
  readonly deadLetterReason?: DeadLetterReason | undefined;
  /** The earliest retry the other side asked for (Payflow's Retry-After), when it did. */
  readonly retryAfterMs?: number | undefined;
  /**
   * True when the failure is only a wait for someone else's work that ends by itself (another
   * worker holds the event's attempt, whose lease runs out): the event is retried without
   * spending its attempts budget, within its duration budget.
   */
  readonly waitsForOther?: boolean | undefined;
  /**
   * Set when the failure is a wait whose end is known (epoch ms): a Payflow call held for a
   * late effect (PAYFLOW_LATE_EFFECT_WINDOW), whose request may still land until then. The
   * event is retried not sooner than `retryAfterMs`, spending neither its attempts nor its
   * duration budget: the window bounds the wait, not the retry budget.
   */
  readonly waitsUntilMs?: number | undefined;

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

const EMAIL = /[\w.+-]+@[\w-]+(\.[\w-]+)+/g;
/**
 * Seven digits or more in a row (phone, card or account numbers), or written the
 * international way, a + then seven digits or more split by spaces, hyphens or brackets
 * ("+47 912 34 567"). Dates, times and IP addresses stay readable.
 */
const LONG_NUMBER = /\+\d(?:[ ()-]{0,2}\d){6,}|\d{7,}/g;

/**
 * One line describing any thrown value, without stack, for logs, headers and stored
 * reasons. Our own errors (AppError) carry no personal data by contract and are kept as
 * `CODE: message`; any other error is `Name code: message` with e-mail addresses and long
 * digit runs (phone, card or account numbers that a driver error might echo) scrubbed; a
 * thrown non-Error is named by its type only. Control characters and line breaks become
 * spaces, and the line is at most `maxLength` characters.
 */
export function describeError(error: unknown, maxLength = 500): string {
  let text: string;
  if (error instanceof AppError) {
    text = `${error.code}: ${error.message}`;
  } else if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const name = typeof code === 'string' ? `${error.name} ${code}` : error.name;
    text = `${name}: ${scrubPersonalData(error.message)}`;
  } else {
    text = `non-error thrown: ${typeof error}`;
  }
  return oneLine(text, maxLength);
}

/** Replaces e-mail addresses and long (phone-, card- or account-like) numbers in `text`. */
export function scrubPersonalData(text: string): string {
  return text.replace(EMAIL, '[email]').replace(LONG_NUMBER, '[number]');
}
