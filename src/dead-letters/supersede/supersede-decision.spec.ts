import { describe, expect, it } from '@jest/globals';
import type { EventLetter } from '../dead-letter.repository.js';
import { decideSupersede, type SupersedeFacts } from './supersede-decision.js';

const at = new Date('2026-11-27T10:00:00Z');
const NEW = 'a0000000-0000-4000-8000-000000000002';
const OLD = 'a0000000-0000-4000-8000-000000000001';

function aLetter(fields: Partial<EventLetter> = {}): EventLetter {
  return {
    id: '1',
    orderId: 'SO-1',
    organizationId: 'org-1',
    eventId: OLD,
    eventType: 'order.payment_requested',
    reason: 'invalid_event',
    replayedAt: null,
    discardedAt: null,
    discardedBy: null,
    discardReason: null,
    supersededBy: null,
    ...fields,
  };
}

function facts(fields: Partial<SupersedeFacts> = {}): SupersedeFacts {
  return {
    eventId: NEW,
    orderId: 'SO-1',
    supersedes: OLD,
    own: [],
    replaced: [],
    replacedTookEffect: false,
    ...fields,
  };
}

const refusedWith = (error: RegExp) => ({ kind: 'refuse', error: expect.stringMatching(error) });

describe('whether an event may take the place of the one it supersedes', () => {
  it('supersedes a waiting letter of the same order that can never take effect', () => {
    for (const reason of ['invalid_event', 'mapping_failed', 'rejected_by_payflow']) {
      const letter = aLetter({ reason });
      expect(decideSupersede(facts({ replaced: [letter] }))).toEqual({
        kind: 'supersede',
        letters: [letter],
      });
    }
  });

  it('goes on when this very event superseded it before (a redelivery), or a person discarded it', () => {
    const superseded = aLetter({ discardedAt: at, discardedBy: 'erp', supersededBy: NEW });
    expect(decideSupersede(facts({ replaced: [superseded] }))).toEqual({
      kind: 'go_on',
      why: 'superseded_before',
    });
    const discarded = aLetter({ discardedAt: at, discardedBy: 'kari' });
    expect(decideSupersede(facts({ replaced: [discarded] }))).toEqual({
      kind: 'go_on',
      why: 'discarded_by_a_person',
    });
  });

  it('refuses what took effect, is in doubt, is unknown or is another order’s', () => {
    expect(decideSupersede(facts({ replacedTookEffect: true }))).toEqual(
      refusedWith(new RegExp(`^event ${NEW} cannot supersede event ${OLD}: it took effect$`)),
    );
    expect(decideSupersede(facts({ replaced: [aLetter({ reason: 'in_doubt' })] }))).toEqual(
      refusedWith(/in doubt .*in-doubt resolve SO-1/),
    );
    expect(decideSupersede(facts())).toEqual(refusedWith(/no dead letter of order SO-1/));
    expect(decideSupersede(facts({ replaced: [aLetter({ orderId: 'SO-2' })] }))).toEqual(
      refusedWith(/belongs to another order/),
    );
  });

  it('refuses a letter of another reason, one superseded by another event, one replayed', () => {
    expect(
      decideSupersede(facts({ replaced: [aLetter({ reason: 'blocked_by_earlier_failure' })] })),
    ).toEqual(refusedWith(/dead-lettered blocked_by_earlier_failure; only invalid_event/));
    const other = 'a0000000-0000-4000-8000-000000000003';
    expect(
      decideSupersede(
        facts({
          replaced: [aLetter({ discardedAt: at, discardedBy: 'erp', supersededBy: other })],
        }),
      ),
    ).toEqual(refusedWith(new RegExp(`superseded by event ${other} already`)));
    expect(decideSupersede(facts({ replaced: [aLetter({ replayedAt: at })] }))).toEqual(
      refusedWith(/replayed and may still take effect/),
    );
  });

  it('stays refused once refused, and refuses an event that was itself discarded', () => {
    const letter = aLetter();
    const refusedBefore = aLetter({ id: '9', eventId: NEW, reason: 'supersede_refused' });
    expect(decideSupersede(facts({ own: [refusedBefore], replaced: [letter] }))).toEqual(
      refusedWith(/refused before and stays refused/),
    );
    const discarded = aLetter({ id: '9', eventId: NEW, discardedAt: at, discardedBy: 'kari' });
    expect(decideSupersede(facts({ own: [discarded], replaced: [letter] }))).toEqual(
      refusedWith(/itself was discarded/),
    );
    // A refusal a person replayed is decided again.
    const replayedRefusal = { ...refusedBefore, replayedAt: at };
    expect(decideSupersede(facts({ own: [replayedRefusal], replaced: [letter] })).kind).toBe(
      'supersede',
    );
  });
});
