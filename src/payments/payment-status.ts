/**
 * Payflow's raw payment status and payflow-bridge's normalized one (docs/assumptions.md):
 * DRAFT, OPENED, INITIATED, PENDING → pending; SUCCESS, PAID → paid; REJECTED → failed, or
 * cancelled when every installment is CANCELLED or the bridge cancelled it; anything else
 * → unknown (the raw value is kept beside it).
 */
import type { NormalizedStatus } from '../events/normalized-status.js';

export type { NormalizedStatus } from '../events/normalized-status.js';

export interface NormalizeContext {
  /** Raw statuses of the payment's installments, when known. */
  readonly installmentStatuses?: readonly string[];
  /** The bridge cancelled the payment (order.cancelled). */
  readonly cancelledByBridge?: boolean;
}

export function normalizePaymentStatus(
  providerStatus: string,
  context: NormalizeContext = {},
): NormalizedStatus {
  switch (providerStatus) {
    case 'DRAFT':
    case 'OPENED':
    case 'INITIATED':
    case 'PENDING':
      return 'pending';
    case 'SUCCESS':
    case 'PAID':
      return 'paid';
    case 'REJECTED': {
      const installments = context.installmentStatuses ?? [];
      const allCancelled =
        installments.length > 0 && installments.every((status) => status === 'CANCELLED');
      return context.cancelledByBridge === true || allCancelled ? 'cancelled' : 'failed';
    }
    default:
      return 'unknown';
  }
}

/** Bridge-side lifecycle of a payment row. */
export type PaymentState = 'creating' | 'created' | 'in_doubt' | 'creation_failed' | 'cancelled';
