/**
 * A dead letter as the operator's reads show it in a list: `order show` (an order's
 * letters) and the console's dead-letter list (every letter, filtered). One shape and one
 * mapping, so both say the same about a letter.
 */
import { sanitizeText } from '../shared/sanitize-text.js';

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
}

/** The columns of a dead letter the view is made of. */
export interface DeadLetterViewRow {
  readonly id: string;
  readonly eventId: string | null;
  readonly eventType: string | null;
  readonly reason: string;
  readonly error: string;
  readonly attempts: number;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly failedAt: Date;
  readonly replayedAt: Date | null;
}

export function deadLetterView(row: DeadLetterViewRow): DeadLetterView {
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
  };
}
