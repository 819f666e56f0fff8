/**
 * Errors that send an order event to the dead-letter topic, each with the CONTRACT §4
 * reason it stands for. They live at the bottom layer, beside AppError, so that whoever
 * raises them (the event parser, the handlers) and the one failure policy that reads them
 * (src/messaging/transport/failure-policy.ts) share them without depending on each other.
 */
import { AppError, type DeadLetterReason, type ErrorMetadata } from './app-error.js';

type Options = { cause?: unknown; metadata?: ErrorMetadata };

/** An event that can never take effect as it is: it goes to the dead-letter topic at once. */
export abstract class EventRejectedError extends AppError {
  readonly transient = false;
  abstract override readonly deadLetterReason: DeadLetterReason;
}

/** The message value is not UTF-8 JSON. */
export class InvalidJsonError extends EventRejectedError {
  readonly deadLetterReason = 'invalid_json';
  readonly code = 'EVENT.INVALID_JSON';
}

/** The envelope or the data does not match the contract, or the type is unknown. */
export class InvalidEventError extends EventRejectedError {
  readonly deadLetterReason = 'invalid_event';
  readonly code = 'EVENT.INVALID';
}

/** A valid event that cannot become a Payflow call (inconsistent amounts, unknown refs …). */
export class MappingFailedError extends EventRejectedError {
  readonly deadLetterReason = 'mapping_failed';
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
  readonly deadLetterReason = 'blocked_by_earlier_failure';
  readonly code = 'EVENT.BLOCKED_BY_EARLIER_FAILURE';
}

/** A non-idempotent Payflow call of this event may or may not have taken effect. */
export class InDoubtError extends EventRejectedError {
  readonly deadLetterReason = 'in_doubt';
  readonly code = 'EVENT.IN_DOUBT';
}
