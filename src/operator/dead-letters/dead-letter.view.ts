/**
 * A dead letter as the operator's reads show it in a list: `order show` (an order's
 * letters) and the console's dead-letter list (every letter, filtered). One shape and one
 * mapping, so both say the same about a letter.
 */
import type { DeadLetterOverview } from '../../dead-letters/dead-letter.repository.js';
import { sanitizeText } from '../masking/sanitize-text.js';

export interface DeadLetterView {
  readonly id: string;
  readonly eventId: string | null;
  readonly eventType: string | null;
  readonly reason: string;
  /** One line, secrets masked. */
  readonly error: string;
  readonly attempts: number;
  /** topic/partition@offset of the original message. */
  readonly origin: string;
  readonly failedAt: string;
  readonly replayed: boolean;
  readonly replayedAt: string | null;
  /** Discarded (`dlq discard`, or superseded): it never takes effect, and is never replayed. */
  readonly discarded: boolean;
  readonly discardedAt: string | null;
  readonly discardedBy: string | null;
  /** Why, one line, secrets masked. */
  readonly discardReason: string | null;
  /** The eventId of the ERP event that took its place, for a supersede. */
  readonly supersededBy: string | null;
  /** Neither replayed nor discarded: it holds its order back. */
  readonly waiting: boolean;
  /** A person may discard it now: it waits, names its event, and is not in doubt. */
  readonly discardable: boolean;
}

/** A letter as `order show` or the console's list read it (both rows have these columns). */
export function deadLetterView(row: DeadLetterOverview): DeadLetterView {
  const waiting = row.replayedAt === null && row.discardedAt === null;
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    reason: row.reason,
    error: sanitizeText(row.error),
    attempts: row.attempts,
    origin: `${row.topic}/${row.partition}@${row.offset}`,
    failedAt: row.failedAt.toISOString(),
    replayed: row.replayedAt !== null,
    replayedAt: row.replayedAt?.toISOString() ?? null,
    discarded: row.discardedAt !== null,
    discardedAt: row.discardedAt?.toISOString() ?? null,
    discardedBy: row.discardedBy === null ? null : sanitizeText(row.discardedBy),
    discardReason: row.discardReason === null ? null : sanitizeText(row.discardReason),
    supersededBy: row.supersededBy,
    waiting,
    discardable: waiting && row.eventId !== null && row.reason !== 'in_doubt',
  };
}
