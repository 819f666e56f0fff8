import { describe, expect, it } from '@jest/globals';
import { isFinalPaymentStatus } from './final-status.js';
import { computeStatusChanges, type StoredPayment } from './status-changes.js';

const stored: StoredPayment = {
  id: 'p-1',
  orderId: 'SO-1',
  organizationId: 'org-1',
  payflowId: 'a'.repeat(24),
  state: 'created',
  providerStatus: 'OPENED',
  status: 'pending',
};

describe('computeStatusChanges', () => {
  it('keeps an unknown status raw and normalizes it to unknown', () => {
    const changes = computeStatusChanges(
      stored,
      [],
      { status: 'ON_HOLD', installments: [] },
      'poll',
    );
    expect(changes.payment).toMatchObject({ providerStatus: 'ON_HOLD', status: 'unknown' });
    expect(changes.events).toEqual([
      expect.objectContaining({
        type: 'payment.status_changed',
        data: {
          providerStatus: 'ON_HOLD',
          previousProviderStatus: 'OPENED',
          status: 'unknown',
          source: 'poll',
        },
      }),
    ]);
  });

  it('makes no event of the same snapshot', () => {
    expect(
      computeStatusChanges(stored, [], { status: 'OPENED', installments: [] }, 'webhook').events,
    ).toEqual([]);
  });

  it('refuses to move a final status back', () => {
    const paid = { ...stored, providerStatus: 'SUCCESS', status: 'paid' };
    const changes = computeStatusChanges(paid, [], { status: 'OPENED', installments: [] }, 'poll');
    expect(changes).toMatchObject({ regressionRefused: true, payment: null, events: [] });
  });

  it('says cancelled when the bridge cancelled the payment or every installment is cancelled', () => {
    const cancelled = computeStatusChanges(
      { ...stored, state: 'cancelled' },
      [],
      { status: 'REJECTED', installments: [] },
      'poll',
    );
    expect(cancelled.payment?.status).toBe('cancelled');
    const allCancelled = computeStatusChanges(
      stored,
      [],
      {
        status: 'REJECTED',
        installments: [{ id: 'i1', status: 'CANCELLED' }],
      },
      'poll',
    );
    expect(allCancelled.payment?.status).toBe('cancelled');
    expect(
      computeStatusChanges(stored, [], { status: 'REJECTED', installments: [] }, 'poll').payment
        ?.status,
    ).toBe('failed');
  });

  it('emits installment changes by Payflow id and ignores unknown installments', () => {
    const changes = computeStatusChanges(
      stored,
      [{ id: 'row-1', installmentRef: '1', payflowInstallmentId: 'i1', providerStatus: 'OPENED' }],
      {
        status: 'OPENED',
        installments: [
          { id: 'i1', status: 'PAID' },
          { id: 'i9', status: 'PAID' },
        ],
      },
      'webhook',
    );
    expect(changes.unmatchedInstallments).toBe(1);
    expect(changes.events).toEqual([
      expect.objectContaining({
        type: 'installment.status_changed',
        data: {
          installmentId: 'i1',
          installmentRef: '1',
          providerStatus: 'PAID',
          previousProviderStatus: 'OPENED',
        },
      }),
    ]);
  });

  it('knows the final statuses', () => {
    expect(['SUCCESS', 'REJECTED', 'PAID'].every(isFinalPaymentStatus)).toBe(true);
    expect(
      ['DRAFT', 'OPENED', 'INITIATED', 'PENDING', 'UNKNOWN', 'X', null].some(isFinalPaymentStatus),
    ).toBe(false);
  });
});
