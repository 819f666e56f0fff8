/**
 * Transitional re-exports: the dead-letter reasons and error classes moved to src/common
 * (app-error.ts, dead-letter.errors.ts) so that the failure policy decides from the error
 * alone. Kept only for src/orders/engine/*, src/orders/orders.consumer.ts and
 * payment-requested.mapping.spec.ts (being changed in parallel); import from src/common
 * instead, and delete this file once nothing imports it.
 */
export { DEAD_LETTER_REASONS, type DeadLetterReason } from '../common/app-error.js';
export {
  BlockedByEarlierFailureError,
  EventRejectedError,
  InDoubtError,
  InvalidEventError,
  InvalidJsonError,
  MappingFailedError,
} from '../common/dead-letter.errors.js';
