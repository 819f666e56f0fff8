/**
 * What a person gives a discard (`dlq discard`, the console's form), checked at the door:
 * the event id is a UUID (an ERP eventId), the reason one line of 1 to 500 characters. The
 * reason is published in `event.discarded`: the doors say it must name no personal data.
 */
import { z } from 'zod';
import { ValidationError } from '../../errors/app-error.js';

export const DISCARD_REASON_MAX = 500;

/** A discard's input the person must correct. */
export class InvalidDiscardInputError extends ValidationError {
  constructor(message: string) {
    super('DISCARD.INVALID_INPUT', message);
  }
}

const eventIdSchema = z.uuid();

export function parseDiscardEventId(value: string): string {
  const parsed = eventIdSchema.safeParse(value.trim());
  if (!parsed.success) {
    throw new InvalidDiscardInputError(`not an event id (a UUID): "${value.slice(0, 100)}"`);
  }
  // As given: dead letters keep the id as the ERP wrote it.
  return parsed.data;
}

export function parseDiscardReason(value: string): string {
  // One line: control characters (new lines among them) become spaces.
  const reason = value
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (reason.length === 0 || [...reason].length > DISCARD_REASON_MAX) {
    throw new InvalidDiscardInputError(
      `the reason must be 1 to ${DISCARD_REASON_MAX} characters: why the event will never take effect`,
    );
  }
  return reason;
}
