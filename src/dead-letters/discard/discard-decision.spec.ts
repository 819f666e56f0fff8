import { describe, expect, it } from '@jest/globals';
import type { EventLetter } from '../dead-letter.repository.js';
import { decideDiscard } from './discard-decision.js';

const at = new Date('2026-11-27T10:00:00Z');

function aLetter(fields: Partial<EventLetter> = {}): EventLetter {
  return {
    id: '1',
    orderId: 'SO-1',
    organizationId: 'org-1',
    eventId: 'e-1',
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

describe('whether a person may discard an event’s dead letter', () => {
  it('discards the letters that wait, whatever their reason but in_doubt', () => {
    const replayed = aLetter({ id: '1', reason: 'rejected_by_payflow', replayedAt: at });
    const waiting = aLetter({ id: '5', reason: 'mapping_failed' });
    expect(decideDiscard([replayed, waiting], false)).toEqual({
      kind: 'discard',
      letters: [waiting],
    });
    for (const reason of ['blocked_by_earlier_failure', 'retries_exhausted', 'supersede_refused']) {
      expect(decideDiscard([aLetter({ reason })], false).kind).toBe('discard');
    }
  });

  it('refuses a letter in doubt: it takes a verdict', () => {
    const inDoubt = aLetter({ reason: 'in_doubt' });
    expect(decideDiscard([inDoubt], false)).toEqual({
      kind: 'refuse',
      why: 'in_doubt',
      letter: inDoubt,
    });
  });

  it('says "already" for a discarded letter, and changes nothing', () => {
    const discarded = aLetter({ discardedAt: at, discardedBy: 'kari', discardReason: 'dup' });
    expect(decideDiscard([discarded], false)).toEqual({ kind: 'already', letter: discarded });
  });

  it('refuses an event that is not dead-lettered: taken effect, replayed, unknown', () => {
    const replayed = aLetter({ replayedAt: at });
    expect(decideDiscard([replayed], true)).toMatchObject({ kind: 'refuse', why: 'took_effect' });
    expect(decideDiscard([], true)).toEqual({ kind: 'refuse', why: 'took_effect', letter: null });
    expect(decideDiscard([replayed], false)).toMatchObject({ kind: 'refuse', why: 'replayed' });
    expect(decideDiscard([], false)).toEqual({ kind: 'refuse', why: 'unknown', letter: null });
  });
});
