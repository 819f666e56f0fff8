/**
 * The events of the payment status topic (CONTRACT §3), one schema each, describing exactly
 * what the handlers, the status sync, the webhook processor and a discard (event.discarded)
 * write today. Every command outcome carries `sourceEventId`, the ERP event it answers.
 */
import { z } from 'zod';
import {
  amountSchema,
  currencySchema,
  isoDateSchema,
  normalizedStatusSchema,
  paymentlessStatusEventSchema,
  previousProviderStatusSchema,
  providerStatusSchema,
  sourceEventIdSchema,
  statusEventSchema,
} from './event-envelope.schema.js';

const installmentRefSchema = z.string().describe("the ERP's reference of the installment");
const installmentIdSchema = z.string().describe("Payflow's id of the installment");
const documentRefSchema = z.string().describe("the ERP's reference of the document");
const documentIdSchema = z.string().describe("Payflow's id of the document");

/** A change of the payment's status: Payflow's status after and before it, and ours. */
const statusChangeShape = {
  providerStatus: providerStatusSchema,
  previousProviderStatus: previousProviderStatusSchema,
  status: normalizedStatusSchema,
};

/**
 * The outcome of an order command that changed the payment's status (cancel, mark paid):
 * the ERP event it answers, the command's own fields, then the change.
 */
function statusCommandEventSchema<T extends string, S extends z.ZodRawShape>(
  type: T,
  description: string,
  own: S,
) {
  return statusEventSchema(
    type,
    description,
    z.strictObject({ sourceEventId: sourceEventIdSchema, ...own, ...statusChangeShape }),
  );
}

export const paymentCreatedSchema = statusEventSchema(
  'payment.created',
  'Payflow created the payment an order.payment_requested asked for.',
  z.strictObject({
    sourceEventId: sourceEventIdSchema.nullable(),
    paymentLink: z.string().nullable().describe("Payflow's _links.longGui, when known"),
    currency: currencySchema,
    totalGrossAmount: amountSchema,
    totalNetAmount: amountSchema,
    vatAmount: amountSchema,
    paymentMethodId: z.string().nullable(),
    installments: z.array(
      z.strictObject({
        installmentRef: installmentRefSchema,
        installmentId: installmentIdSchema.nullable(),
        date: isoDateSchema,
        amount: amountSchema,
        currency: currencySchema,
        status: providerStatusSchema.nullable(),
      }),
    ),
  }),
);

export const paymentCreationFailedSchema = paymentlessStatusEventSchema(
  'payment.creation_failed',
  'The payment an order.payment_requested asked for was not created, or may not have been (in_doubt).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    reason: z.enum(['mapping_failed', 'rejected_by_payflow', 'in_doubt']),
    code: z.string().describe('stable error code, e.g. PAYFLOW.VALIDATION'),
    message: z.string(),
    validation: z
      .array(
        z.strictObject({
          loc: z.array(z.union([z.string(), z.number()])),
          msg: z.string(),
          type: z.string(),
        }),
      )
      .describe("Payflow's 422 detail[], empty otherwise"),
  }),
);

export const paymentStatusChangedSchema = statusEventSchema(
  'payment.status_changed',
  "The payment's status at Payflow changed (learnt from a webhook or a poll).",
  z.strictObject({
    ...statusChangeShape,
    source: z.enum(['webhook', 'poll']),
  }),
);

export const installmentStatusChangedSchema = statusEventSchema(
  'installment.status_changed',
  "An installment's status at Payflow changed.",
  z.strictObject({
    installmentId: installmentIdSchema,
    installmentRef: installmentRefSchema.nullable(),
    providerStatus: providerStatusSchema,
    previousProviderStatus: previousProviderStatusSchema,
  }),
);

export const paymentTerminalFailedSchema = statusEventSchema(
  'payment.terminal_failed',
  'Payflow reported a failure at a payment terminal (terminal-failure webhook).',
  z.strictObject({
    providerStatus: providerStatusSchema,
    terminalId: z.string().optional().describe('when Payflow said'),
    reason: z.string().optional().describe('when Payflow said'),
    source: z.literal('webhook'),
  }),
);

export const paymentCancelledSchema = statusCommandEventSchema(
  'payment.cancelled',
  'The payment was cancelled (order.cancelled).',
  { reason: z.string().nullable() },
);

export const paymentRefundedSchema = statusEventSchema(
  'payment.refunded',
  'Payflow refunded (part of) the payment (order.refund_requested).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    refundId: z.string().describe("the ERP's refundId"),
    payflowRefundId: z.string(),
    refundType: z.string(),
    currency: currencySchema,
    amountGross: amountSchema,
    amountNet: amountSchema,
    remainingAmount: amountSchema.nullable(),
  }),
);

export const paymentMarkedPaidSchema = statusCommandEventSchema(
  'payment.marked_paid',
  'The payment was marked paid by hand (order.marked_paid).',
  { note: z.string().nullable() },
);

export const paymentResentSchema = statusEventSchema(
  'payment.resent',
  'The payment was sent again to a payment method (order.payment_resend_requested).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    paymentMethodId: z.string(),
    terminalId: z.string().nullable(),
    invoiceType: z.string().nullable(),
    status: z.string().describe("Payflow's answer"),
  }),
);

export const documentAttachedSchema = statusEventSchema(
  'document.attached',
  'A document was uploaded to the payment (order.document_attached).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    documentRef: documentRefSchema,
    documentId: documentIdSchema,
    fileName: z.string(),
    contentType: z.string(),
    size: z.number().describe('bytes'),
  }),
);

export const documentRemovedSchema = statusEventSchema(
  'document.removed',
  'A document was deleted from the payment (order.document_removed).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    documentRef: documentRefSchema,
    documentId: documentIdSchema,
  }),
);

export const installmentAddedSchema = statusEventSchema(
  'installment.added',
  'An installment was added to the payment (order.installment_added).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    installmentRef: installmentRefSchema,
    installmentId: installmentIdSchema,
    date: z.string().describe('as Payflow answered'),
    amount: amountSchema,
    currency: currencySchema,
    type: z.string().describe("Payflow's installment type"),
    status: providerStatusSchema,
  }),
);

export const installmentChangedSchema = statusEventSchema(
  'installment.changed',
  'An installment was changed (order.installment_changed).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    installmentRef: installmentRefSchema,
    installmentId: installmentIdSchema,
    date: z.string().describe('as Payflow answered'),
    previousDate: isoDateSchema,
    amount: amountSchema,
    previousAmount: amountSchema,
    currency: currencySchema,
    status: providerStatusSchema,
  }),
);

export const installmentRemovedSchema = statusEventSchema(
  'installment.removed',
  'An installment was removed (order.installment_removed).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    installmentRef: installmentRefSchema,
    installmentId: installmentIdSchema,
    date: isoDateSchema,
    amount: amountSchema,
    currency: currencySchema,
    status: providerStatusSchema,
  }),
);

export const receiptPrintedSchema = statusEventSchema(
  'receipt.printed',
  'A receipt was printed on a payment terminal (order.terminal_receipt_requested).',
  z.strictObject({
    sourceEventId: sourceEventIdSchema,
    terminalId: z.string(),
    status: z.string().describe("Payflow's answer"),
  }),
);

const eventDiscardedDescription =
  'An ERP order event will never take effect: its dead letter was discarded, by a person ' +
  '(dlq discard, the console) or because a later event of the order superseded it.';

/** Not about a payment: `paymentId` is null (the order may have one all the same). */
export const eventDiscardedSchema = statusEventSchema(
  'event.discarded',
  eventDiscardedDescription,
  z.strictObject({
    eventId: z.uuid().describe('eventId of the ERP event that will never take effect'),
    eventType: z.string().nullable().describe('its type, null when it could not be read'),
    reason: z.string().min(1).describe('why, in the words of whoever discarded it'),
    discardedBy: z
      .string()
      .min(1)
      .describe('who: the person (dlq discard --by, the console), or "erp" for a supersede'),
    supersededBy: z
      .uuid()
      .nullable()
      .describe('eventId of the ERP event that took its place (its supersedes), or null'),
  }),
)
  .extend({ paymentId: z.null().describe('null: the event is about an ERP event, not a payment') })
  .meta({ title: 'event.discarded', description: eventDiscardedDescription });
