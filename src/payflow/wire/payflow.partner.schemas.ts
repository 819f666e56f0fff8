/**
 * Payflow's wire format of group B, the partner API ({partner_base_url}): the token, who we
 * are, payment methods, terminal receipts, manual payments and settlement files. Re-exported
 * by payflow.schemas.ts, which holds group A and the shared pieces; the same rules apply
 * (responses are loose objects, requests plain ones, "not shown" read leniently).
 */
import { z } from 'zod';
import { lenientLifetimeSeconds, lenientTimestamp } from './payflow.lenient.js';

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD' });
const nonEmpty = z.string().min(1);

// ---------------------------------------------------------------- partner: auth

/** POST /auth/token: RFC 6749 client credentials, form-encoded, HTTP Basic client auth. */
export const tokenRequestSchema = z.object({
  grant_type: z.literal('client_credentials'),
  scope: z.string().optional(),
});

/**
 * The spec shows no token answer. `expires_in` may be absent or null (the client then assumes
 * DEFAULT_TOKEN_LIFETIME_SECONDS, payflow.token.ts) or numeric text.
 */
export const tokenResponseSchema = z.looseObject({
  access_token: nonEmpty,
  token_type: z.string().refine((value) => value.toLowerCase() === 'bearer', {
    message: 'must be Bearer',
  }),
  expires_in: lenientLifetimeSeconds,
  scope: z.string().optional(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

/** GET /auth/ping */
export const pingResponseSchema = z.looseObject({
  ok: z.literal(true),
  clientId: z.string(),
  scopes: z.array(z.string()),
  expiresAt: lenientTimestamp,
});
export type PingResponse = z.infer<typeof pingResponseSchema>;

/** GET /auth/organizations */
export const organizationsResponseSchema = z.looseObject({
  organizations: z.array(z.looseObject({ id: nonEmpty, name: z.string() })),
});

// ---------------------------------------------------------------- partner: payment methods

export const PAYMENT_METHOD_TYPES = ['payment_link', 'terminal', 'invoice'] as const;

export const paymentMethodSchema = z.looseObject({
  id: nonEmpty,
  name: z.string(),
  type: z.string(),
  terminals: z.array(z.looseObject({ id: nonEmpty, name: z.string() })).optional(),
  invoiceTypes: z.array(z.string()).optional(),
});
export type PaymentMethod = z.infer<typeof paymentMethodSchema>;

export const paymentMethodsResponseSchema = z.looseObject({
  paymentMethods: z.array(paymentMethodSchema),
});

export const resendSchema = z.object({
  paymentId: nonEmpty,
  paymentMethodId: nonEmpty,
  terminalId: z.string().optional(),
  invoiceType: z.string().optional(),
});
export type ResendBody = z.infer<typeof resendSchema>;

export const resendResponseSchema = z.looseObject({
  paymentId: nonEmpty,
  paymentMethodId: nonEmpty,
  status: z.string(),
});
export type ResendResponse = z.infer<typeof resendResponseSchema>;

// ---------------------------------------------------------------- partner: payments

export const printReceiptSchema = z.object({ terminalId: z.string().optional() });
export const printReceiptResponseSchema = z.looseObject({
  paymentId: nonEmpty,
  terminalId: z.string(),
  status: z.string(),
});
export type PrintReceiptResponse = z.infer<typeof printReceiptResponseSchema>;

export const manualPaidSchema = z.object({ note: z.string().max(1000).optional() });
export const manualPaidResponseSchema = z.looseObject({
  paymentId: nonEmpty,
  paymentStatus: z.string(),
});
export type ManualPaidResponse = z.infer<typeof manualPaidResponseSchema>;

// ---------------------------------------------------------------- partner: settlements

export const SETTLEMENT_FORMATS = ['standard'] as const;
export type SettlementFormat = (typeof SETTLEMENT_FORMATS)[number];
export const settlementQuerySchema = z
  .object({
    from: isoDate,
    to: isoDate,
    format: z.enum(SETTLEMENT_FORMATS).default('standard'),
  })
  .refine((query) => query.from <= query.to, {
    message: 'from must not be after to',
    path: ['to'],
  });
export type SettlementQuery = z.input<typeof settlementQuerySchema>;

/** Columns of the standard settlement CSV, in order (decision; see docs/assumptions.md). */
export const SETTLEMENT_CSV_COLUMNS = [
  'settlement_id',
  'settlement_date',
  'organization_id',
  'payment_id',
  'payment_number',
  'installment_id',
  'internal_ref',
  'order_number',
  'transaction_type',
  'currency',
  'gross_amount',
  'fee_amount',
  'net_amount',
  'booked_at',
] as const;
