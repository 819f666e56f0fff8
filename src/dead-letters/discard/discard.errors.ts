import { AppError } from '../../errors/app-error.js';

/** A discard that cannot be done: nothing changed. `code` says why (DISCARD.*). */
export class DiscardRefusedError extends AppError {
  readonly transient = false;
  constructor(
    readonly code: 'DISCARD.IN_DOUBT' | 'DISCARD.NOT_DEAD_LETTERED',
    message: string,
    metadata: { readonly eventId: string; readonly orderId: string | null },
  ) {
    super(message, { metadata });
  }
}

/** The discard is recorded, but what it wrote was not published in time. */
export class DiscardNotPublishedError extends AppError {
  readonly code = 'DISCARD.NOT_PUBLISHED';
  readonly transient = true;
}
