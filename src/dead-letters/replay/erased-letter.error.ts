import { AppError } from '../../errors/app-error.js';

/**
 * A replay (or a discard's republishing) met a dead letter whose personal data was erased
 * (`privacy erase`, RETENTION_PERSONAL_DATA): its event no longer says what the ERP sent, so
 * it is never published again. Nothing changed. The way on: `dlq discard` it, or have the
 * ERP send the event again.
 */
export class ErasedLetterReplayError extends AppError {
  readonly code = 'REPLAY.ERASED';
  readonly transient = false;
  constructor(
    readonly orderId: string | null,
    letterId: string,
  ) {
    super(
      `${orderId === null ? `dead letter #${letterId}` : `order ${orderId}`} is not replayed: ` +
        `the personal data of dead letter #${letterId} was erased, so its event can never be ` +
        'sent again; discard it (dlq discard EVENT_ID) or have the ERP send the event again',
      { metadata: { orderId, letterId } },
    );
  }
}
