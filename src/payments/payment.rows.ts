/**
 * What PaymentRepository's reads and writes of the `payments` table take and give, and the
 * zod schemas its rows are parsed with, beside the repository (payment.repository.ts), which
 * re-exports the types, so that the table's SQL stays in one file under the length the house
 * keeps.
 */
import { z } from 'zod';
import { timestampField } from '../database/row-schemas.js';
import { storedTraceHeaders, type StoredTraceHeaders } from './payment-trace.js';

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

/** The order's latest payment that Payflow created (the target of every other command). */
export interface LatestPayment {
  /** payflow-bridge's id (payments.id). */
  readonly id: string;
  readonly orderId: string;
  readonly payflowId: string;
  readonly currency: string;
  readonly organizationId: string | null;
  readonly state: string;
  readonly providerStatus: string | null;
  /** Minor units (bigint: the column is). */
  readonly totalGrossMinor: bigint;
}

/** A payment to create (state `creating`), with what its order row needs. */
export interface NewPaymentRow {
  /** Position in its statement, from 1; gates and plans refer to it. */
  readonly n: number;
  readonly id: string;
  readonly eventId: string;
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly orderNumber: string;
  /** The ERP customer number, kept on the order (the console finds orders by it). */
  readonly customerNumber: string | null;
  readonly currency: string;
  readonly totalGrossMinor: number;
  readonly totalNetMinor: number;
  readonly webhookToken: string;
  readonly apiKeyHash: Buffer;
  readonly paymentMethodId: string | null;
  /** The ERP's `paymentRef` / `externalRef` as sent to Payflow (null: none). */
  readonly paymentRef: string | null;
  readonly externalRef: string | null;
  /** W3C trace headers of the creation, which the payment's webhooks continue. */
  readonly traceHeaders: StoredTraceHeaders | null;
}

/** A payment as the operator's reads show it (no token, no key hash, no trace). */
export type PaymentOverview = z.infer<typeof overviewRow>;

/** A payment with a Payflow id whose status is not final yet (reconciliation's page). */
export interface OpenPayment {
  readonly id: string;
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly payflowId: string;
  /** ISO 4217 code (the column is char(3), so trimmed). */
  readonly currency: string;
}

export const minor = z.union([z.string(), z.number()]).transform(Number);
export const text = z.string();
export const nullableText = z.string().nullable();

export const latestRow = z
  .object({
    id: text,
    payflow_id: text,
    currency: text,
    organization_id: nullableText,
    order_id: text,
    state: text,
    provider_status: nullableText,
    total_gross_minor: z
      .string()
      .regex(/^-?\d+$/)
      .transform(BigInt),
  })
  .transform((row): LatestPayment => ({
    id: row.id,
    orderId: row.order_id,
    payflowId: row.payflow_id,
    currency: row.currency.trim(),
    organizationId: row.organization_id,
    state: row.state,
    providerStatus: row.provider_status,
    totalGrossMinor: row.total_gross_minor,
  }));

export const idRow = z.object({ id: text });

export const settledRow = z
  .object({
    order_id: text,
    organization_id: nullableText,
    currency: text,
    total_gross_minor: minor,
    total_net_minor: minor,
    payment_link: nullableText,
    payment_method_id: nullableText,
    event_id: nullableText,
    trace_headers: storedTraceHeaders,
  })
  .transform((row): SettledPayment => ({
    orderId: row.order_id,
    organizationId: row.organization_id,
    currency: row.currency.trim(),
    totalGrossMinor: row.total_gross_minor,
    totalNetMinor: row.total_net_minor,
    paymentLink: row.payment_link,
    paymentMethodId: row.payment_method_id,
    eventId: row.event_id,
    traceHeaders: row.trace_headers,
  }));

export const inboxRow = z
  .object({
    id: text,
    orderId: text,
    organizationId: nullableText,
    payflowId: nullableText,
    state: text,
    currency: text,
    totalGrossMinor: minor,
    traceHeaders: storedTraceHeaders,
  })
  .transform((row): InboxPayment => ({ ...row, currency: row.currency.trim() }));

export const syncRow = z.object({
  id: text,
  orderId: text,
  organizationId: nullableText,
  payflowId: nullableText,
  state: text,
  providerStatus: nullableText,
  status: nullableText,
  fresh: z.boolean(),
}) satisfies z.ZodType<SyncPayment>;

export const tokenRow = z
  .object({
    webhook_token: text,
    id: text,
    api_key_hash: z.instanceof(Buffer),
    trace_headers: storedTraceHeaders,
  })
  .transform((row): TokenRow => ({
    webhookToken: row.webhook_token,
    paymentId: row.id,
    apiKeyHash: row.api_key_hash,
    traceHeaders: row.trace_headers,
  }));

export const payflowIdRow = z.object({ payflow_id: nullableText });

export const overviewRow = z.object({
  id: text,
  orderId: text,
  payflowId: nullableText,
  organizationId: nullableText,
  state: text,
  providerStatus: nullableText,
  status: nullableText,
  paymentLink: nullableText,
  paymentMethodId: nullableText,
  /** The ERP's paymentRef / externalRef as sent to Payflow. */
  paymentRef: nullableText,
  externalRef: nullableText,
  /** char(3), as stored (not trimmed). */
  currency: text,
  /** Minor units as decimal text. */
  totalGross: text,
  totalNet: text,
  createdAt: timestampField,
  updatedAt: timestampField,
  lastPolledAt: timestampField.nullable(),
});

export const openRow = z
  .object({
    id: text,
    orderId: text,
    organizationId: nullableText,
    payflowId: text,
    currency: text,
  })
  .transform((row): OpenPayment => ({ ...row, currency: row.currency.trim() }));

export const nowRow = z.object({ now: z.date() });

export const payflowOrderRow = z.object({ payflowId: text, orderId: text });

export const personalDataRow = z.object({
  paymentId: z.string(),
  payflowId: z.string().nullable(),
  paymentLink: z.string().nullable(),
});

/** The personal data a payment's row holds (privacy export and erasure): its payment link. */
export type PaymentPersonalData = z.infer<typeof personalDataRow>;

/** A payment as the settlement reconciliation matches lines to it (settlementFacts). */
export const settlementPaymentRow = z.object({
  paymentId: z.string(),
  payflowId: z.string(),
  orderId: z.string(),
  organizationId: z.string().nullable(),
  currency: z.string(),
  totalGrossMinor: z
    .string()
    .regex(/^-?\d+$/)
    .transform(Number),
  /** The ERP's own references (order.payment_requested), shown beside its lines. */
  paymentRef: z.string().nullable(),
  externalRef: z.string().nullable(),
});
export type SettlementPayment = z.infer<typeof settlementPaymentRow>;
