import { AppError, describeError } from '../errors/app-error.js';

/**
 * A night's pull failed: Payflow answered with an error, the download broke off, or the
 * database refused the file. Nothing of it was stored; the night stays (or becomes)
 * `missing` and the next run tries again. `transient` follows the cause: a 4xx from
 * Payflow will not heal by itself and does not hold back the organization's later nights.
 */
export class SettlementPullError extends AppError {
  readonly code = 'SETTLEMENT.PULL_FAILED';
  readonly transient: boolean;
  /** Why, in one line: the cause as describeError puts it. */
  readonly reason: string;

  constructor(night: { organizationId: string; date: string; format: string }, cause: unknown) {
    const reason = describeError(cause);
    super(
      `settlement ${night.organizationId} ${night.date} (${night.format}) not pulled: ${reason}`,
      {
        cause,
        metadata: { organizationId: night.organizationId, date: night.date, format: night.format },
      },
    );
    this.reason = reason;
    this.transient = !(cause instanceof AppError) || cause.transient;
  }
}
