/**
 * The event id (and type) of a message that could not be read as an event, read leniently
 * from its value: an envelope that breaks the contract often still names its `eventId`. The
 * sink stores it with the dead letter, so that the letter can be discarded or superseded by
 * that id (CONTRACT §10) like any other; a discard reads it out of letters stored before.
 * Only a UUID is taken (never a part of a malformed value), and a type only when it is one
 * of the contract's.
 */
import { z } from 'zod';
import { isOrderEventType, type OrderEventType } from '../events/order-event.schema.js';

/** What an unreadable envelope may still say about itself. */
export interface LetterIdentity {
  readonly eventId: string;
  readonly eventType: OrderEventType | null;
}

const named = z.looseObject({ eventId: z.uuid(), type: z.unknown().optional() });

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The identity the value names, or null when it names no event id. */
export function identityOfValue(value: Buffer | null): LetterIdentity | null {
  if (value === null || value.length === 0) return null;
  let json: unknown;
  try {
    json = JSON.parse(UTF8.decode(value));
  } catch {
    return null;
  }
  const parsed = named.safeParse(json);
  if (!parsed.success) return null;
  const { eventId, type } = parsed.data;
  return {
    eventId,
    eventType: typeof type === 'string' && isOrderEventType(type) ? type : null,
  };
}
