/**
 * Builders of payment status events (CONTRACT §3) for specs: each gives a valid event with
 * defaults, so a spec states only what matters to it.
 */
import type { StatusEvent } from '../../src/payments/payment-status-events.js';

/** The order event a built status event answers (its `sourceEventId`). */
export const STATUS_SOURCE_EVENT = '6f1c2a4e-1b7d-4a8e-9c1e-0b5d1f7e2a90';

/** A `payment.cancelled` of order SO-1 in org-1: Payflow's OPENED → CANCELLED. */
export function aCancelledEvent(
  overrides: Partial<Omit<StatusEvent<'payment.cancelled'>, 'type'>> = {},
): StatusEvent<'payment.cancelled'> {
  return {
    type: 'payment.cancelled',
    orderId: 'SO-1',
    organizationId: 'org-1',
    paymentId: 'pay-1',
    data: {
      sourceEventId: STATUS_SOURCE_EVENT,
      reason: null,
      providerStatus: 'CANCELLED',
      previousProviderStatus: 'OPENED',
      status: 'cancelled',
    },
    ...overrides,
  };
}
