/**
 * What DeadLetterRepository's reads and writes of the `dead_letters` table take and give, and
 * the zod schemas its rows are parsed with, beside the repository (dead-letter.repository.ts),
 * which re-exports the types, so that the table's SQL stays in one file under the length the
 * house keeps (as payments/payment.rows.ts does for `payments`).
 */
import { z } from 'zod';
import { timestampField } from '../database/row-schemas.js';

/** Who discarded a letter, when and why (all null while it was not). */
export const discardFields = {
  discardedAt: timestampField.nullable(),
  discardedBy: z.string().nullable(),
  discardReason: z.string().nullable(),
  supersededBy: z.string().nullable(),
};

export const letterRow = z.object({
  id: z.string(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  reason: z.string(),
  error: z.string(),
  attempts: z.number(),
  topic: z.string(),
  partition: z.number(),
  offset: z.string(),
  failedAt: timestampField,
  replayedAt: timestampField.nullable(),
  ...discardFields,
});

/** A dead letter as `order show` lists it. */
export type DeadLetterOverview = z.infer<typeof letterRow>;

export const eventLettersRow = z.object({
  orderId: z.string(),
  eventId: z.string(),
  parked: z.number().int(),
  value: z.instanceof(Buffer).nullable(),
});

/** What the dead letters say about one event of an order. */
export type EventLetters = z.infer<typeof eventLettersRow>;

export const eventLetterRow = z.object({
  id: z.string(),
  orderId: z.string().nullable(),
  organizationId: z.string().nullable(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  reason: z.string(),
  replayedAt: timestampField.nullable(),
  ...discardFields,
  /** The value, only for a letter stored without an event id (read to find the id in it). */
  value: z.instanceof(Buffer).nullable(),
});

/** A letter of one event, as a discard or a supersede decides on it. */
export type EventLetter = Omit<z.infer<typeof eventLetterRow>, 'value'>;

/** Who discards a letter and why. */
export interface LetterDiscard {
  readonly eventId: string;
  readonly by: string;
  readonly reason: string;
  readonly supersededBy: string | null;
}

/** An order's event, by ids. */
export interface OrderEventKey {
  readonly orderId: string;
  readonly eventId: string;
}

export const summaryRow = z.object({
  id: z.string(),
  orderId: z.string().nullable(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  reason: z.string(),
  error: z.string(),
  attempts: z.number(),
  failedAt: timestampField,
});

/** A dead letter as the replay plans it (no key or value: they may be large). */
export type DeadLetterSummary = z.infer<typeof summaryRow>;

/** The message as it was received: what a replay publishes again and the console shows. */
export const messageFields = {
  key: z.instanceof(Buffer).nullable(),
  value: z.instanceof(Buffer).nullable(),
  headers: z.record(z.string(), z.unknown()),
};

export const replayableRow = summaryRow.extend({
  ...messageFields,
  /** When its personal data was erased (`privacy erase`): such a letter is never replayed. */
  erasedAt: timestampField.nullable(),
});

/** A dead letter with what is needed to publish it again. */
export type ReplayableDeadLetter = z.infer<typeof replayableRow>;

export const listedRow = summaryRow.extend({
  organizationId: z.string().nullable(),
  topic: z.string(),
  partition: z.number(),
  offset: z.string(),
  replayedAt: timestampField.nullable(),
  ...discardFields,
  /** Where the next page starts: `failed_at` (UTC, to the microsecond) and id. */
  cursor: z.string(),
});

/** A dead letter as the console lists it (no key, value or headers). */
export type ListedDeadLetter = z.infer<typeof listedRow>;

export const storedRow = listedRow.extend(messageFields);

/** A dead letter with the message as it was received (key, value, headers). */
export type StoredDeadLetter = z.infer<typeof storedRow>;

/** What the console's dead-letter list selects; every field narrows it. */
export interface DeadLetterFilter {
  readonly reason?: string;
  readonly organizationId?: string;
  /** Failed at or after. */
  readonly from?: Date;
  /** Failed before. */
  readonly to?: Date;
  /** `waiting`: neither replayed nor discarded (the default); `replayed`; `discarded`; `all`. */
  readonly state?: 'waiting' | 'replayed' | 'discarded' | 'all';
}

/** A page position: the cursor of the last row of the page before. */
export interface DeadLetterCursor {
  readonly failedAt: string;
  readonly id: string;
}

export const headersField = z.record(z.string(), z.unknown());

export const personalDataRow = z.object({
  id: z.string(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  reason: z.string(),
  error: z.string(),
  failedAt: timestampField,
  erasedAt: timestampField.nullable(),
  discardReason: z.string().nullable(),
  value: z.instanceof(Buffer).nullable(),
  headers: headersField,
});

/** A dead letter as a privacy export shows it and an erasure reads it: everything that may name a person. */
export type LetterPersonalData = z.infer<typeof personalDataRow>;

/** A dead letter that quotes some text: its order and its value (privacy's selection). */
export interface MentioningLetter {
  readonly orderId: string;
  readonly value: Buffer | null;
}

/** What a dead letter becomes when its personal data is erased. */
export interface ErasedLetter {
  readonly id: string;
  readonly value: Buffer | null;
  /** The event itself lost data: marked erased (a replay refuses it from now on). */
  readonly eventErased: boolean;
  readonly error: string;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly discardReason: string | null;
}
