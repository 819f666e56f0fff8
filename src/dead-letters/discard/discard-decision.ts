/**
 * Whether a person may discard an event's dead letter (`dlq discard`, the console), decided
 * from its letters alone, oldest first, and whether it took effect. Pure: the service reads
 * the facts in its transaction, decides here, and writes what was decided.
 *
 * A letter "waits" while it is neither replayed nor discarded. An event normally has one
 * letter; it has more when it was replayed and failed again, or arrived twice.
 */
import type { EventLetter } from '../dead-letter.repository.js';

export type DiscardRefusal =
  /** A call that may have taken effect: it takes a verdict (`in-doubt resolve`), not a discard. */
  | 'in_doubt'
  /** The event took effect: nothing to discard. */
  | 'took_effect'
  /** Its letter was replayed and has not failed again: it may still take effect. */
  | 'replayed'
  /** No dead letter has this event id. */
  | 'unknown';

export type DiscardDecision =
  /** Discard these waiting letters. */
  | { readonly kind: 'discard'; readonly letters: readonly EventLetter[] }
  /** Discarded before (the latest such letter): nothing changes. */
  | { readonly kind: 'already'; readonly letter: EventLetter }
  | { readonly kind: 'refuse'; readonly why: DiscardRefusal; readonly letter: EventLetter | null };

/** A letter that neither a replay nor a discard took yet. */
export function waits(letter: EventLetter): boolean {
  return letter.replayedAt === null && letter.discardedAt === null;
}

export function decideDiscard(
  letters: readonly EventLetter[],
  tookEffect: boolean,
): DiscardDecision {
  const waiting = letters.filter(waits);
  const inDoubt = waiting.find((letter) => letter.reason === 'in_doubt');
  if (inDoubt !== undefined) return { kind: 'refuse', why: 'in_doubt', letter: inDoubt };
  if (waiting.length > 0) return { kind: 'discard', letters: waiting };
  const discarded = letters.filter((letter) => letter.discardedAt !== null).at(-1);
  if (discarded !== undefined) return { kind: 'already', letter: discarded };
  if (tookEffect) return { kind: 'refuse', why: 'took_effect', letter: letters.at(-1) ?? null };
  const replayed = letters.at(-1);
  if (replayed !== undefined) return { kind: 'refuse', why: 'replayed', letter: replayed };
  return { kind: 'refuse', why: 'unknown', letter: null };
}
