/**
 * What PaymentRepository's reads and writes of the `payments` table take and give, beside
 * the repository (payment.repository.ts), which re-exports them, so that the table's SQL
 * stays in one file under the length the house keeps.
 */
import type { StoredTraceHeaders } from './payment-trace.js';

/** A payment whose creation was settled late (resolveInDoubt). */
export interface SettledPayment {
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly currency: string;
  readonly totalGrossMinor: number;
  readonly totalNetMinor: number;
  readonly paymentLink: string | null;
  readonly paymentMethodId: string | null;
  readonly eventId: string | null;
  readonly traceHeaders: StoredTraceHeaders | null;
}

/** What the webhook processor needs of a payment. */
export interface InboxPayment {
  readonly id: string;
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly payflowId: string | null;
  readonly state: string;
  readonly currency: string;
  readonly totalGrossMinor: number;
  readonly traceHeaders: StoredTraceHeaders | null;
}

/** A payment locked for the status sync, and whether a snapshot of `fetchedAt` is newer. */
export interface SyncPayment {
  readonly id: string;
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly payflowId: string | null;
  readonly state: string;
  readonly providerStatus: string | null;
  readonly status: string | null;
  readonly fresh: boolean;
}

export interface CreatedAtPayflow {
  readonly paymentId: string;
  readonly payflowId: string;
  readonly paymentLink: string | null;
}

export interface SyncedStatus {
  readonly paymentId: string;
  readonly checkedAt: Date;
  readonly providerStatus: string | null;
  readonly status: string | null;
  readonly polled: boolean;
}

/** A payment's webhook token entry (the receiver's authentication). */
export interface TokenRow {
  readonly webhookToken: string;
  readonly paymentId: string;
  readonly apiKeyHash: Buffer;
  readonly traceHeaders: StoredTraceHeaders | null;
}
