/**
 * Errors that send an order event to the dead-letter topic, each with the CONTRACT §4
 * reason it stands for. The transport's failure policy is the one place that turns an
 * error into "retry" or "dead-letter"; it reads the class, nothing else.
 */
import { AppError, type ErrorMetadata } from '../common/app-error.js';

export const DEAD_LETTER_REASONS = [
  'invalid_json',
  'invalid_event',
  'mapping_failed',
  'rejected_by_payflow',
  'retries_exhausted',
  'blocked_by_earlier_failure',
  'in_doubt',
] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

type Options = { cause?: unknown; metadata?: ErrorMetadata };

/** An event that can never take effect as it is: it goes to the dead-letter topic at once. */
export abstract class EventRejectedError extends AppError {
  readonly transient = false;
  abstract readonly reason: DeadLetterReason;
}

/** The message value is not UTF-8 JSON. */
export class InvalidJsonError extends EventRejectedError {
  readonly reason = 'invalid_json';
  readonly code = 'EVENT.INVALID_JSON';
  constructor(message: string, options: Options = {}) {
    super(message, options);
  }
}

/** The envelope or the data does not match the contract, or the type is unknown. */
export class InvalidEventError extends EventRejectedError {
  readonly reason = 'invalid_event';
  readonly code = 'EVENT.INVALID';
  constructor(message: string, options: Options = {}) {
    super(message, options);
  }
}

/** A valid event that cannot become a Payflow call (inconsistent amounts, unknown refs …). */
export class MappingFailedError extends EventRejectedError {
  readonly reason = 'mapping_failed';
  constructor(
    readonly code: string,
    message: string,
    options: Options = {},
  ) {
    super(message, options);
  }
}

/** An earlier event of the same order is dead-lettered; this one follows it. */
export class BlockedByEarlierFailureError extends EventRejectedError {
  readonly reason = 'blocked_by_earlier_failure';
  readonly code = 'EVENT.BLOCKED_BY_EARLIER_FAILURE';
  constructor(message: string, options: Options = {}) {
    super(message, options);
  }
}

/** A non-idempotent Payflow call of this event may or may not have taken effect. */
export class InDoubtError extends EventRejectedError {
  readonly reason = 'in_doubt';
  readonly code = 'EVENT.IN_DOUBT';
  constructor(message: string, options: Options = {}) {
    super(message, options);
  }
}
