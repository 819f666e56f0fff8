import { AppError } from '../common/app-error.js';

/**
 * Another worker is in the middle of a Payflow call for this very event (its attempt's
 * lease is still running). Transient: the transport tries again later, by when the other
 * worker has finished or its lease has run out (and the attempt is in doubt).
 */
export class OrderBusyError extends AppError {
  readonly code = 'ORDER.BUSY';
  readonly transient = true;
}
