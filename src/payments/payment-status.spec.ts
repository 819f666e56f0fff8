import { describe, expect, it } from '@jest/globals';
import { normalizePaymentStatus } from './payment-status.js';

describe('normalizePaymentStatus', () => {
  it('maps Payflow statuses to the normalized ones', () => {
    for (const status of ['DRAFT', 'OPENED', 'INITIATED', 'PENDING']) {
      expect(normalizePaymentStatus(status)).toBe('pending');
    }
    expect(normalizePaymentStatus('SUCCESS')).toBe('paid');
    expect(normalizePaymentStatus('PAID')).toBe('paid');
    expect(normalizePaymentStatus('REJECTED')).toBe('failed');
    expect(normalizePaymentStatus('REJECTED', { cancelledByBridge: true })).toBe('cancelled');
    expect(
      normalizePaymentStatus('REJECTED', { installmentStatuses: ['CANCELLED', 'CANCELLED'] }),
    ).toBe('cancelled');
    expect(normalizePaymentStatus('REJECTED', { installmentStatuses: ['PAID', 'CANCELLED'] })).toBe(
      'failed',
    );
    expect(normalizePaymentStatus('UNKNOWN')).toBe('unknown');
    expect(normalizePaymentStatus('SOMETHING_NEW')).toBe('unknown');
  });
});
