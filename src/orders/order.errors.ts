import { AppError } from '../errors/app-error.js';

/**
 * Another worker is in the middle of a Payflow call for this very event (its attempt's
 * lease is still running), e.g. the partition's previous owner after a rebalance.
 * Transient: the transport tries again later, by when the other worker has finished or its
 * lease has run out (and the protocol decides: take over, probe, or in doubt). The wait is
 * bounded by that lease, so it spends none of the event's attempts (`waitsForOther`): a
 * live owner's slow call never turns the event into a `retries_exhausted` dead letter.
 */
export class OrderBusyError extends AppError {
  readonly code = 'ORDER.BUSY';
  readonly transient = true;
  override readonly waitsForOther = true;
}
