/**
 * What an operator selects for a replay, parsed from the command line. The filters select
 * ORDERS: an order qualifies when one of its unreplayed dead letters matches all the given
 * filters, and then every unreplayed dead letter of that order is replayed.
 */
import { ValidationError } from '../../errors/app-error.js';
import { DEAD_LETTER_REASONS, type DeadLetterReason } from '../../errors/app-error.js';

export interface ReplayFilter {
  /** Only this order (its key-less dead letters are never part of an order filter). */
  readonly orderId?: string;
  /** Orders with an unreplayed dead letter of this reason. */
  readonly reason?: DeadLetterReason;
  /** Orders with an unreplayed dead letter that failed at or after this time. */
  readonly since?: Date;
}

/** A command-line value the operator must correct. */
export class InvalidReplayFilterError extends ValidationError {
  constructor(message: string) {
    super('REPLAY.INVALID_FILTER', message);
  }
}

export function parseReason(value: string): DeadLetterReason {
  const reason = DEAD_LETTER_REASONS.find((known) => known === value.trim());
  if (reason === undefined) {
    throw new InvalidReplayFilterError(
      `--reason must be one of ${DEAD_LETTER_REASONS.join(', ')} (got "${value}")`,
    );
  }
  return reason;
}

const RELATIVE = /^(\d+)\s*(m|h|d|w)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * `--since`: an ISO 8601 date (midnight UTC), an ISO 8601 date-time (UTC unless it names
 * an offset), or an age such as 30m, 12h, 7d, 2w (that long before `now`).
 */
export function parseSince(value: string, now: Date = new Date()): Date {
  const text = value.trim();
  const relative = RELATIVE.exec(text);
  if (relative) {
    const unit = relative[2] as keyof typeof UNIT_MS;
    return new Date(now.getTime() - Number(relative[1]) * UNIT_MS[unit]);
  }
  let parsed: Date | null = null;
  if (ISO_DATE.test(text)) parsed = new Date(`${text}T00:00:00Z`);
  else if (ISO_DATE_TIME.test(text)) {
    const normalized = text.replace(' ', 'T');
    parsed = new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(normalized) ? normalized : `${normalized}Z`);
  }
  if (parsed === null || Number.isNaN(parsed.getTime())) {
    throw new InvalidReplayFilterError(
      `--since must be an ISO 8601 date or date-time, or an age such as 30m, 12h or 7d (got "${value}")`,
    );
  }
  return parsed;
}

export function parseOrderId(value: string): string {
  const orderId = value.trim();
  if (orderId.length === 0) throw new InvalidReplayFilterError('--order must not be empty');
  return orderId;
}
