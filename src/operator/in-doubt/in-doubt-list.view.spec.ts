import { describe, expect, it } from '@jest/globals';
import type { InDoubtRow } from '../../orders/in-doubt/in-doubt-calls.port.js';
import {
  describeAge,
  describeWaiting,
  inDoubtItem,
  renderInDoubtList,
  renderWaitingList,
} from './in-doubt-list.view.js';

const NOW = new Date('2026-11-27T12:00:00.000Z');

function aRow(overrides: Partial<InDoubtRow> = {}): InDoubtRow {
  return {
    attemptId: '7',
    eventId: '00000000-0000-4000-8000-000000000001',
    orderId: 'SO-1',
    command: 'order.payment_requested',
    errorCode: 'PAYFLOW.CONNECTION_RESET',
    startedAt: new Date('2026-11-27T10:59:59.000Z'),
    sentAt: new Date('2026-11-27T11:00:00.000Z'),
    inDoubtSince: new Date('2026-11-27T11:00:02.000Z'),
    paymentId: 'pay-1',
    organizationId: 'org-1',
    payflowId: null,
    paymentState: 'in_doubt',
    currency: 'NOK',
    totalGross: '125000',
    plannedInstallments: 0,
    blocked: true,
    parked: 1,
    letterValue: null,
    webhooks: [],
    probeOutcome: null,
    probeEvidence: null,
    probedAt: null,
    heldUntil: null,
    ...overrides,
  };
}

describe('in-doubt list items', () => {
  it('says until when a held call waits for a late effect, in its own list', () => {
    const held = inDoubtItem(
      aRow({
        command: 'order.installment_added',
        inDoubtSince: null,
        heldUntil: new Date('2026-11-27T11:03:00.000Z'),
        probeOutcome: 'not_applied',
        probeEvidence: { read: 'GET paymentStatus', shown: '1 installment, none new' },
      }),
      NOW,
    );
    expect(held.waitingForLateEffectUntil).toBe('2026-11-27T11:03:00.000Z');
    expect(describeWaiting(held)).toBe('waiting for a late effect until 2026-11-27T11:03:00.000Z');
    expect(describeWaiting(inDoubtItem(aRow(), NOW))).toBeNull();
    const text = renderWaitingList([held]);
    expect(text).toContain('1 Payflow call(s) waiting for a late effect');
    expect(text).toContain('waiting for a late effect until 2026-11-27T11:03:00.000Z');
    expect(text).toContain('not_applied: GET paymentStatus showed 1 installment, none new');
    expect(renderWaitingList([])).toBe('No Payflow call is waiting for a late effect.\n');
  });

  it('says how long ago a request left, and that one without a send mark never left', () => {
    const left = inDoubtItem(aRow(), NOW);
    expect(left.request).toEqual({ left: true, leftSecondsAgo: 3600 });
    const never = inDoubtItem(aRow({ sentAt: null }), NOW);
    expect(never.request).toEqual({ left: false, leftSecondsAgo: null });

    const text = renderInDoubtList([left, never]);
    expect(text).toContain('2026-11-27T11:00:00.000Z (1h 00m ago)');
    expect(text).toContain('never left (no send mark)');
  });

  it('counts the webhooks received for the payment, and those not processed yet', () => {
    const none = inDoubtItem(aRow(), NOW);
    expect(none.webhooks).toEqual({
      received: 0,
      unprocessed: 0,
      firstReceivedAt: null,
      lastReceivedAt: null,
      kinds: [],
    });
    const webhook = {
      paymentId: 'pay-1',
      kind: 'status-update',
      duplicates: 0,
      attempts: 1,
      lastError: null,
    };
    const some = inDoubtItem(
      aRow({
        webhooks: [
          {
            ...webhook,
            id: '1',
            receivedAt: new Date('2026-11-27T11:00:05.000Z'),
            lastReceivedAt: new Date('2026-11-27T11:30:00.000Z'),
            processedAt: new Date('2026-11-27T11:00:06.000Z'),
          },
          {
            ...webhook,
            id: '2',
            receivedAt: new Date('2026-11-27T11:10:00.000Z'),
            lastReceivedAt: new Date('2026-11-27T11:10:00.000Z'),
            processedAt: null,
          },
        ],
      }),
      NOW,
    );
    expect(some.webhooks).toEqual({
      received: 2,
      unprocessed: 1,
      firstReceivedAt: '2026-11-27T11:00:05.000Z',
      lastReceivedAt: '2026-11-27T11:30:00.000Z',
      kinds: ['status-update'],
    });
    const text = renderInDoubtList([none, some]);
    expect(text).toMatch(/\bnone\b/);
    expect(text).toContain('2 (status-update; last 2026-11-27T11:30:00.000Z, 1 not processed yet)');
  });

  it('shows what reading Payflow found, or nothing when the call was never probed', () => {
    const probed = inDoubtItem(
      aRow({
        command: 'order.cancelled',
        probeOutcome: 'unreadable',
        probeEvidence: { read: 'GET paymentStatus', shown: '503 five times' },
        probedAt: new Date('2026-11-27T11:01:00.000Z'),
      }),
      NOW,
    );
    expect(probed.probe).toEqual({
      outcome: 'unreadable',
      evidence: { read: 'GET paymentStatus', shown: '503 five times' },
      probedAt: '2026-11-27T11:01:00.000Z',
    });
    expect(inDoubtItem(aRow(), NOW).probe).toBeNull();
    expect(renderInDoubtList([probed])).toContain(
      'unreadable: GET paymentStatus showed 503 five times',
    );
  });

  it('words ages from seconds to days', () => {
    expect([45, 720, 11_100, 187_200].map(describeAge)).toEqual(['45s', '12m', '3h 05m', '2d 4h']);
  });
});
