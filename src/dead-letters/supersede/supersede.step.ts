/**
 * The SupersedeStep (src/orders/supersede/supersede.port.ts) on Postgres: what the orders
 * consumer runs, before the handler, for an ERP event whose envelope `supersedes` an
 * earlier event of its order (CONTRACT §10).
 *
 * One TransactionBatcher unit (its commit wakes the outbox relay, as the sink's does):
 *
 *   lock the order → read both events' letters and whether the replaced one took effect
 *   → decide (supersede-decision.ts) → when it supersedes: discard the replaced letter in
 *   favour of the new event (`discarded_by` "erp", `superseded_by` its id), write
 *   `event.discarded`, republish the events parked behind it and unblock the order
 *   (DiscardWrites, the same writes as `dlq discard`)
 *
 * The new event then goes on to its handler and takes effect in the replaced one's place;
 * the republished events reach the topic after it, so they follow it. A refusal writes
 * nothing here: the error (SupersedeRefusedError) makes the failure policy dead-letter the
 * new event `supersede_refused`, which blocks its order like any dead letter.
 *
 * Crashes and redelivery: the unit is one transaction (all of it or none). A delivery
 * after it committed finds the replaced letter superseded by this very event and goes on to
 * the handler, whose own ledger makes a delivery after it took effect a duplicate; so a
 * superseding event makes at most one payment however often it comes. A delivery after a
 * refusal finds the event's own `supersede_refused` letter and is refused again.
 *
 * Per the batcher's rules the unit returns what it decided and throws nothing it decided:
 * the refusal is thrown once the unit's batch committed.
 */
import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { TransactionBatcher } from '../../database/transaction-batcher.js';
import { OrderRepository } from '../../orders/order.repository.js';
import {
  SupersedeRefusedError,
  type SupersedeStep,
  type SupersedingEvent,
} from '../../orders/supersede/supersede.port.js';
import { DeadLetterRepository } from '../dead-letter.repository.js';
import { DiscardWrites, type DiscardEffect } from '../discard/discard-writes.js';
import { decideSupersede, type SupersedeDecision } from './supersede-decision.js';

/** Who discards a superseded letter, in its row and in `event.discarded`. */
export const SUPERSEDED_BY_ERP = 'erp';

type Settled =
  | Exclude<SupersedeDecision, { kind: 'supersede' }>
  | { readonly kind: 'superseded'; readonly effect: DiscardEffect };

@Injectable()
export class PostgresSupersedeStep implements SupersedeStep {
  constructor(
    @Inject(TransactionBatcher) private readonly batcher: TransactionBatcher,
    @Inject(DiscardWrites) private readonly writes: DiscardWrites,
    @Inject(DeadLetterRepository) private readonly letters: DeadLetterRepository,
    @Inject(OrderRepository) private readonly orders: OrderRepository,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async prepare(event: SupersedingEvent): Promise<void> {
    const { eventId, orderId, supersedes } = event;
    const settled = await this.batcher.run(async (tx): Promise<Settled> => {
      await this.orders.lock(tx, orderId);
      // One statement at a time: a unit runs its SQL on the batch's one connection.
      const own = await this.writes.lettersOf(tx, eventId, { orderId });
      const replaced = await this.writes.lettersOf(tx, supersedes, { orderId, lock: true });
      const replacedTookEffect = await this.letters.tookEffect(tx, supersedes);
      const facts = { eventId, orderId, supersedes, own, replaced, replacedTookEffect };
      const decision = decideSupersede(facts);
      if (decision.kind !== 'supersede') return decision;
      const effect = await this.writes.discard(tx, decision.letters, {
        eventId: supersedes,
        by: SUPERSEDED_BY_ERP,
        reason: `superseded by event ${eventId} (${event.type})`,
        supersededBy: eventId,
        organizationId: event.organizationId,
        ...(event.trace === undefined ? {} : { trace: event.trace }),
      });
      return { kind: 'superseded', effect };
    });
    const about = { eventId, orderId, supersedes, eventType: event.type };
    switch (settled.kind) {
      case 'refuse':
        throw new SupersedeRefusedError(settled.error, { metadata: about });
      case 'superseded':
        this.logger.info(
          {
            ...about,
            republished: settled.effect.republished.length,
            stillBlocked: settled.effect.stillBlockedBy !== null,
          },
          'order event supersedes a dead-lettered one; the replaced one is discarded',
        );
        return;
      case 'go_on':
        this.logger.debug({ ...about, why: settled.why }, 'superseding event goes on');
        return;
    }
  }
}
