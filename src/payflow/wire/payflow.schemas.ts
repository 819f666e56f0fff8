/**
 * Payflow's wire format (spec: ../shared/spec/payment-collection-service.md), as zod schemas.
 *
 * Both the client (src/payflow) and the sandbox (src/sandbox) use these, so every decision
 * taken where the spec says "not shown" lives here once and is explained in
 * docs/assumptions.md. Amounts are JSON numbers in major units here; the client converts
 * them to and from integer minor units at its edge.
 *
 * Responses are loose objects: unknown fields from Payflow are tolerated and kept. Fields the
 * spec types `any` and answers it does not show are read with the tolerant readers of
 * payflow.lenient.ts (any reasonable JSON shape, normalized); where the spec is strict, so
 * are these schemas. Request bodies are plain objects: unknown fields are ignored.
 */
import { z } from 'zod';
import {
  lenientAmount,
  lenientCalendarDate,
  lenientCount,
  lenientIdentifier,
  lenientTimestamp,
} from './payflow.lenient.js';

/** Group B (the partner API) is in its own file. */
export * from './payflow.partner.schemas.js';

export const PAYFLOW_SCOPES = {
  create: 'organization:payflow:create',
  update: 'organization:payflow:update',
  read: 'organization:payflow:read',
} as const;
export type PayflowScope = (typeof PAYFLOW_SCOPES)[keyof typeof PAYFLOW_SCOPES];

/** The default payment method (the payment link) always has this identifier. */
export const DEFAULT_PAYMENT_METHOD_ID = '000000000000000000000000';

const amount = z.number().finite();
const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD' });
const nonEmpty = z.string().min(1);

// ---------------------------------------------------------------- shared pieces

export const itemSchema = z.object({
  description: z.string(),
  grossUnitPrice: amount.optional(),
  netUnitPrice: amount.optional(),
  grossTotalPrice: amount.nullish(),
  netTotalPrice: amount.nullish(),
  vatAmount: amount.optional(),
  quantity: z.number().finite().optional(),
  taxRate: z.number().finite().optional(),
  discountRate: z.number().finite().optional(),
  lineType: z.enum(['regular', 'shipping', 'part-sum']).optional(),
});
export type PayflowItem = z.infer<typeof itemSchema>;

/**
 * Installment record, returned by create, get and status calls. Status is kept raw. The
 * spec types `successfullyChargedAt` and `lastFailedAt` `any`: any time shape (ISO text,
 * epoch seconds or milliseconds), null or absent, read as ISO 8601 UTC text or null.
 */
export const installmentRecordSchema = z.looseObject({
  id: nonEmpty,
  date: z.string(),
  type: z.string(),
  grossAmount: amount,
  status: z.string(),
  numTried: z.number().int(),
  successfullyChargedAt: lenientTimestamp,
  numFailed: z.number().int(),
  lastFailedAt: lenientTimestamp,
});
export type InstallmentRecord = z.infer<typeof installmentRecordSchema>;

/**
 * The installment record where the spec shows no shape (the items of the create-payment
 * answer, the answers of PUT and DELETE installment): the amount may also be decimal text and
 * the counts digit text.
 */
export const unshownInstallmentRecordSchema = installmentRecordSchema.extend({
  grossAmount: lenientAmount,
  numTried: lenientCount,
  numFailed: lenientCount,
});
export type UnshownInstallmentRecord = z.infer<typeof unshownInstallmentRecordSchema>;

/** 422 body. */
export const validationErrorSchema = z.looseObject({
  detail: z
    .array(
      z.looseObject({
        loc: z.array(z.union([z.string(), z.number()])),
        msg: z.string(),
        type: z.string(),
      }),
    )
    .optional(),
});
export type ValidationErrorBody = z.infer<typeof validationErrorSchema>;
export type ValidationDetail = NonNullable<ValidationErrorBody['detail']>[number];

/** Body of every other error (decision: the spec shows none). */
export const errorBodySchema = z.looseObject({ code: z.string(), message: z.string() });

/** Token endpoint errors follow RFC 6749 §5.2. */
export const oauthErrorSchema = z.looseObject({
  error: z.string(),
  error_description: z.string().optional(),
});

// ---------------------------------------------------------------- POST /api/payments

export const customerSchema = z.object({
  type: z.enum(['person', 'company']).optional(),
  email: z.string().email().optional(),
  phone: z.object({ countryCode: z.string(), number: z.string() }).optional(),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  companyName: z.string().optional(),
  customerNumber: z.string().optional(),
  billingAddress: z
    .object({
      careOf: z.string().optional(),
      street: z.string().optional(),
      secondary: z.string().optional(),
      postalCode: z.string().optional(),
      city: z.string().optional(),
      country: z.string().optional(),
      countryCode: z.string().optional(),
    })
    .optional(),
});

export const orderObjectSchema = z.object({
  type: z.enum(['', 'newCar', 'tradeInCAR']),
  numberPlate: z.string().optional(),
  brand: z.string().optional(),
  model: z.string().optional(),
  color: z.string().optional(),
  year: z.string().optional(),
  vinNumber: z.string().optional(),
});

export const createInstallmentSchema = z.object({
  date: isoDate,
  grossAmount: amount,
  items: z.array(itemSchema).optional(),
});
export type CreateInstallmentBody = z.infer<typeof createInstallmentSchema>;

export const createPaymentSchema = z.object({
  customer: customerSchema,
  order: z.object({ orderNumber: nonEmpty, objects: z.array(orderObjectSchema) }),
  payment: z.object({
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, { message: 'must be an ISO 4217 code' })
      .optional(),
    totalGrossAmount: amount,
    totalNetAmount: amount,
    installments: z.array(createInstallmentSchema).nullish(),
    installmentsMode: z.string().nullish(),
    items: z.array(itemSchema).optional(),
    dueDate: isoDate,
    paymentRef: z.string().optional(),
    invoiceNumber: z.string().optional(),
    customerReference: z.string().optional(),
    invoiceComments: z.string().nullish(),
    profileId: z.string().nullish(),
    paymentDepartment: z.string().nullish(),
    internalRef: z.string().optional(),
    externalRef: z.string().optional(),
  }),
  communication: z
    .object({
      send_payment_link: z.boolean().optional(),
      send_payment_reminder: z.boolean().optional(),
    })
    .optional(),
  behaviour: z
    .object({
      redirectSuccessUrl: z.string().url().optional(),
      redirectCancelUrl: z.string().url().optional(),
      cancelButtonText: z.string().optional(),
    })
    .optional(),
  serviceAdvisorEmail: z.string().email().nullish(),
  paymentMethodId: z.string().nullish(),
  callback: z
    .object({
      url: z.string().url().optional(),
      status_update_url: z.string().url().optional(),
      terminal_failure_url: z.string().url().optional(),
      api_key: z.unknown().optional(),
    })
    .optional(),
  supportFunctions: z
    .array(
      z.looseObject({
        sharebox: z
          .object({ useSharebox: z.boolean().optional(), plateNumber: z.string().optional() })
          .optional(),
      }),
    )
    .optional(),
});
export type CreatePaymentBody = z.infer<typeof createPaymentSchema>;

export const createPaymentResponseSchema = z.looseObject({
  id: nonEmpty,
  _links: z.looseObject({ longGui: z.string().optional(), gui: z.string().optional() }).optional(),
  /** "Item shape: not shown". */
  installments: z.array(unshownInstallmentRecordSchema).nullish(),
});
export type CreatePaymentResponse = z.infer<typeof createPaymentResponseSchema>;

// ---------------------------------------------------------------- documents

/** POST /api/payments/uploadDocument (decision: JSON with base64 content; the spec says all bodies are JSON). */
export const uploadDocumentSchema = z.object({
  paymentId: nonEmpty,
  fileName: nonEmpty.max(255),
  contentType: nonEmpty.max(255),
  contentBase64: nonEmpty,
});
export type UploadDocumentBody = z.infer<typeof uploadDocumentSchema>;

/**
 * A document record: the upload answer and the items of `files[]` in the payment status, both
 * "not shown" by the spec. Only `id` is required; the client fills what is missing from an
 * upload answer from the upload itself.
 */
export const documentSchema = z.looseObject({
  id: lenientIdentifier,
  paymentId: z.string().optional(),
  fileName: z.string().optional(),
  contentType: z.string().optional(),
  size: lenientCount.optional(),
  uploadedAt: lenientTimestamp,
});
export type DocumentRecord = z.infer<typeof documentSchema>;

/** DELETE /api/payments/uploadDocument/{payflow_id}/{document_id} */
export const deleteDocumentResponseSchema = z.looseObject({
  id: nonEmpty,
  deleted: z.literal(true),
});

// ---------------------------------------------------------------- status, cancel

export const paymentStatusResponseSchema = z.looseObject({
  totalAmount: amount,
  /** `any` (array of installment record): an array, null or absent. */
  installments: z.array(installmentRecordSchema).nullish(),
  paymentId: nonEmpty,
  paymentNumber: z.number().int(),
  paymentStatus: z.looseObject({ paymentStatus: z.string() }),
  merchantId: z.string(),
  createdAt: z.string(),
  /** `any`: a date, a date-time or an epoch time, read as `YYYY-MM-DD`; null or absent. */
  dueDate: lenientCalendarDate,
  /** Item fields: not shown. */
  files: z.array(documentSchema).nullish(),
  currency: z.string().optional(),
});

/**
 * DELETE /api/payments/{payflow_id} answers with the payment's status after cancelling. The
 * spec shows no answer, so its amounts may also be decimal text and its counts digit text.
 */
export const cancelPaymentResponseSchema = paymentStatusResponseSchema.extend({
  totalAmount: lenientAmount,
  installments: z.array(unshownInstallmentRecordSchema).nullish(),
  paymentNumber: lenientCount,
});
export type CancelPaymentResponse = z.infer<typeof cancelPaymentResponseSchema>;

// ---------------------------------------------------------------- refunds

export const refundLineSchema = z.object({
  description: z.string(),
  grossUnitPrice: amount,
  netUnitPrice: amount,
  quantity: z.number().finite(),
  vatAmount: amount,
  taxRate: z.number().finite(),
});

/** crossPayment (decision): the payflow_id of the payment being refunded. */
export const refundSchema = z.object({
  crossPayment: nonEmpty,
  currency: z.string().regex(/^[A-Z]{3}$/, { message: 'must be an ISO 4217 code' }),
  totalGrossAmount: amount,
  totalNetAmount: amount,
  invoiceLines: z.array(refundLineSchema).default([]),
});
export type RefundBody = z.input<typeof refundSchema>;

export const refundResponseSchema = z.looseObject({
  refundType: z.string(),
  debtorAccountNumber: z.string().default(''),
  originalAmount: amount,
  originalCurrency: z.string(),
  grossRefundedAmount: amount,
  netRefundedAmount: amount,
  remainingAmount: amount.nullable(),
  refundId: nonEmpty,
});
export type RefundResponse = z.infer<typeof refundResponseSchema>;

// ---------------------------------------------------------------- installments

/** PUT …/installments/{installment_id} (decision: any subset of the create fields). */
export const updateInstallmentSchema = z
  .object({
    date: isoDate.optional(),
    grossAmount: amount.optional(),
    items: z.array(itemSchema).optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message: 'at least one of date, grossAmount, items is required',
  });
export type UpdateInstallmentBody = z.infer<typeof updateInstallmentSchema>;

// ---------------------------------------------------------------- webhooks

export const WEBHOOK_KINDS = ['payment-update', 'status-update', 'terminal-failure'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

/** Body of every webhook the sandbox sends (decision; the bridge relies on none of it). */
export const webhookPayloadSchema = z.looseObject({
  deliveryId: nonEmpty,
  event: z.enum(['payment.updated', 'payment.status_updated', 'payment.terminal_failure']),
  occurredAt: z.string(),
  organizationId: z.string(),
  paymentId: nonEmpty,
  internalRef: z.string().nullable(),
  paymentStatus: z.string(),
  installments: z.array(installmentRecordSchema),
  change: z.string(),
});
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;
