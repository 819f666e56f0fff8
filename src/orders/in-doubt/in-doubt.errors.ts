/**
 * Why `in-doubt resolve` refused a verdict (nothing in doubt, a payment that does not match,
 * a verdict given otherwise before). Each refusal has its own stable code; the message is
 * one line for the operator and says that nothing changed.
 */
import { AppError, type ErrorMetadata } from '../../errors/app-error.js';

export type InDoubtRefusal =
  | 'IN_DOUBT.NOTHING_IN_DOUBT'
  | 'IN_DOUBT.NOT_A_CREATION'
  | 'IN_DOUBT.PAYMENT_TAKEN'
  | 'IN_DOUBT.NOT_AT_PAYFLOW'
  | 'IN_DOUBT.LOOKUP_FAILED'
  | 'IN_DOUBT.MISMATCH'
  | 'IN_DOUBT.OTHER_VERDICT'
  | 'IN_DOUBT.OTHER_PAYMENT'
  | 'IN_DOUBT.LATE_EFFECT_WINDOW';

export class InDoubtRefusedError extends AppError {
  readonly transient = false;

  constructor(
    readonly code: InDoubtRefusal,
    message: string,
    metadata: ErrorMetadata,
    cause?: unknown,
  ) {
    super(message, { metadata, ...(cause === undefined ? {} : { cause }) });
  }
}
