/**
 * Whether an ERP event may take the place of the earlier event it `supersedes` (CONTRACT
 * §10), decided from the letters of both events and whether the replaced one took effect.
 * Pure; the step reads the facts in its transaction (the order locked), decides here and
 * writes what was decided in the same transaction.
 *
 * Redelivery: the decision is the same however often the new event comes. Once it took the
 * replaced event's place, that letter is discarded with `superseded_by` = its id, and a
 * later delivery goes on to the handler (which finds a duplicate once it took effect). Once
 * it was refused, its own `supersede_refused` letter waits, and it stays refused.
 */
import type { EventLetter } from '../dead-letter.repository.js';
import { waits } from '../discard/discard-decision.js';

/** The dead-letter reasons of an event that can never take effect as it is. */
export const SUPERSEDABLE_REASONS: readonly string[] = [
  'invalid_event',
  'mapping_failed',
  'rejected_by_payflow',
];

export interface SupersedeFacts {
  /** The new event. */
  readonly eventId: string;
  readonly orderId: string;
  /** The eventId it replaces. */
  readonly supersedes: string;
  /** The new event's own letters (a refusal of an earlier delivery, a discard). */
  readonly own: readonly EventLetter[];
  /** The replaced event's letters, oldest first. */
  readonly replaced: readonly EventLetter[];
  readonly replacedTookEffect: boolean;
}

export type SupersedeDecision =
  /** Discard these letters of the replaced event in favour of the new one, then go on. */
  | { readonly kind: 'supersede'; readonly letters: readonly EventLetter[] }
  /** Go on to the handler: superseded by this event before, or discarded by a person. */
  | { readonly kind: 'go_on'; readonly why: 'superseded_before' | 'discarded_by_a_person' }
  /** Dead-letter the new event `supersede_refused`, with this line. */
  | { readonly kind: 'refuse'; readonly error: string };

export function decideSupersede(facts: SupersedeFacts): SupersedeDecision {
  const { eventId, orderId, supersedes } = facts;
  const refuse = (why: string): SupersedeDecision => ({
    kind: 'refuse',
    error: `event ${eventId} cannot supersede event ${supersedes}: ${why}`,
  });

  const own = facts.own.filter(waits);
  if (own.some((letter) => letter.reason === 'supersede_refused')) {
    return refuse('it was refused before and stays refused (discard it, or send a new event)');
  }
  if (facts.own.some((letter) => letter.discardedAt !== null)) {
    return refuse(`event ${eventId} itself was discarded and never takes effect`);
  }
  if (facts.replaced.some((letter) => letter.orderId !== orderId)) {
    return refuse('it belongs to another order');
  }

  const waiting = facts.replaced.filter(waits);
  const [first] = waiting;
  if (first !== undefined) {
    if (waiting.some((letter) => letter.reason === 'in_doubt')) {
      return refuse(
        `it is in doubt (in_doubt): it takes a verdict (in-doubt resolve ${orderId}), not a supersede`,
      );
    }
    if (!SUPERSEDABLE_REASONS.includes(first.reason)) {
      return refuse(
        `it was dead-lettered ${first.reason}; only ${SUPERSEDABLE_REASONS.join(', ')} can be superseded`,
      );
    }
    return { kind: 'supersede', letters: waiting };
  }

  const discarded = facts.replaced.filter((letter) => letter.discardedAt !== null).at(-1);
  if (discarded !== undefined) {
    if (discarded.supersededBy === eventId) return { kind: 'go_on', why: 'superseded_before' };
    if (discarded.supersededBy !== null) {
      return refuse(`it was superseded by event ${discarded.supersededBy} already`);
    }
    return { kind: 'go_on', why: 'discarded_by_a_person' };
  }
  if (facts.replacedTookEffect) return refuse('it took effect');
  if (facts.replaced.length > 0) {
    return refuse('its dead letter was replayed and may still take effect');
  }
  return refuse(`no dead letter of order ${orderId} has that event id`);
}
