/** Bodies of the control API (/sandbox/*, CONTRACT §7 plus the extras). */
import { z } from 'zod';
import { isCurrency } from '../../money/money.js';
import { PAYMENT_METHOD_TYPES } from '../../payflow/wire/payflow.schemas.js';
import { startOfUtcDate, utcDateOf } from '../state/clock.js';
import { SIMULATE_ACTIONS } from '../payments/simulation.js';
import { FEE_METHODS } from '../settlement/fees.js';

const nonEmpty = z.string().min(1);
const domain = z
  .string()
  .min(1)
  .transform((value) => value.trim().toLowerCase().replace(/\.$/, ''));

export const clientSchema = z.object({
  clientId: nonEmpty,
  clientSecret: nonEmpty,
  scopes: z.array(nonEmpty),
  organizationIds: z.array(nonEmpty).min(1),
});

/**
 * POST /sandbox/clients/{clientId}/secret: the client's new secret. The old one stops working at
 * once for token requests; tokens already issued live until they expire (auth.ts).
 */
export const clientSecretSchema = z.object({ clientSecret: nonEmpty });

const currency = z.string().refine(isCurrency, { message: 'must be an ISO 4217 currency' });

export const organizationSchema = z.object({
  id: nonEmpty,
  name: z.string().optional(),
  profiles: z.array(z.object({ id: nonEmpty, department: z.string().optional() })).optional(),
  linkDomain: domain.optional(),
  currency: currency.optional(),
});

export const whitelistSchema = z.object({ domains: z.array(domain) });

export const simulateSchema = z.object({
  action: z.enum(SIMULATE_ACTIONS),
  installmentId: nonEmpty.optional(),
});

export const advanceSchema = z.object({
  minutes: z
    .number()
    .min(0)
    .max(60 * 24 * 366 * 10),
});

export const holdSchema = z.object({ paymentId: nonEmpty, enabled: z.boolean() });

export const paymentMethodsSchema = z.object({
  paymentMethods: z.array(
    z.object({
      id: nonEmpty,
      name: z.string(),
      type: z.enum(PAYMENT_METHOD_TYPES),
      terminals: z.array(z.object({ id: nonEmpty, name: z.string() })).optional(),
      invoiceTypes: z.array(z.string()).optional(),
    }),
  ),
});

/** Items of a listing page when the query gives no `limit`. */
export const DEFAULT_PAGE_SIZE = 1_000;
/** The largest `limit` a listing takes. */
export const MAX_PAGE_SIZE = 5_000;

/** `limit` and `cursor` of a paged listing (GET /sandbox/payments, /sandbox/webhook-deliveries). */
const pageQuery = {
  limit: z
    .string()
    .regex(/^\d+$/, { message: `must be an integer 1-${MAX_PAGE_SIZE}`, abort: true })
    .transform(Number)
    .refine((limit) => limit >= 1 && limit <= MAX_PAGE_SIZE, {
      message: `must be an integer 1-${MAX_PAGE_SIZE}`,
    })
    .default(DEFAULT_PAGE_SIZE),
  /** The `nextCursor` of the page before (opaque). */
  cursor: z.string().regex(/^\d+$/, { message: 'must be a nextCursor of this listing' }).optional(),
};

export const deliveriesQuerySchema = z.object({
  paymentId: z.string().optional(),
  kind: z.string().optional(),
  ...pageQuery,
});

export const paymentsQuerySchema = z.object({
  organizationId: z.string().optional(),
  ...pageQuery,
});

/** Most synthetic settlement rows one POST /sandbox/settlements books. */
export const MAX_SYNTHETIC_SETTLEMENTS = 1_000_000;

const calendarDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD', abort: true })
  .refine((date) => startOfUtcDate(date) !== undefined, { message: 'must be a calendar date' });

/** Major units as a JSON number or exact decimal text ("1249.50", "-100"). */
export const majorAmount = z.union([
  z.number().finite(),
  z.string().regex(/^[+-]?\d+(?:\.\d+)?$/, { message: 'must be a decimal number' }),
]);

export const settlementMovementSchema = z.object({
  paymentId: nonEmpty.optional(),
  installmentId: nonEmpty.optional(),
  internalRef: z.string().optional(),
  orderNumber: z.string().optional(),
  type: z.enum(['payment', 'refund']).optional(),
  currency: currency.optional(),
  grossAmount: majorAmount,
  bookedAt: z.iso.datetime({ offset: true }).optional(),
  /** The fee rule of the row (settlement/fees.ts); default `seeded`, a flat 1.5 %. */
  feeMethod: z.enum(FEE_METHODS).optional(),
});

/** POST /sandbox/settlements: settlement CSV rows (and broken lines) on a chosen date. */
export const settlementSeedSchema = z
  .object({
    organizationId: nonEmpty.optional(),
    date: calendarDate,
    count: z.number().int().min(0).max(MAX_SYNTHETIC_SETTLEMENTS).optional(),
    movements: z.array(settlementMovementSchema).optional(),
    malformedLines: z.array(z.string()).optional(),
  })
  .superRefine((seed, context) => {
    seed.movements?.forEach((movement, index) => {
      if (movement.bookedAt === undefined) return;
      if (utcDateOf(Date.parse(movement.bookedAt)) === seed.date) return;
      context.addIssue({
        code: 'custom',
        path: ['movements', index, 'bookedAt'],
        message: `must be on ${seed.date} (UTC)`,
        input: movement.bookedAt,
      });
    });
  });
export type SettlementSeed = z.output<typeof settlementSeedSchema>;

/** Most days a control may delay a settlement line. */
export const MAX_LATE_DAYS = 366;

/**
 * POST /sandbox/payments/{id}/settlement: what happens to the payment's next `count` lines
 * of `kind` (settlement/booking.ts). `never` excludes the others; at least one is asked for.
 */
export const settlementControlSchema = z
  .object({
    kind: z.enum(['payment', 'refund']).default('payment'),
    grossAmount: majorAmount.optional(),
    twice: z.boolean().optional(),
    never: z.boolean().optional(),
    lateDays: z.number().int().min(0).max(MAX_LATE_DAYS).optional(),
    count: z.number().int().min(1).max(1_000).default(1),
  })
  .superRefine((body, context) => {
    if (
      body.grossAmount === undefined &&
      body.twice === undefined &&
      body.never === undefined &&
      body.lateDays === undefined
    ) {
      context.addIssue({
        code: 'custom',
        path: [],
        message: 'must set at least one of grossAmount, twice, never, lateDays',
        input: body,
      });
    }
    if (body.never !== true) return;
    for (const field of ['grossAmount', 'twice', 'lateDays'] as const) {
      if (body[field] === undefined || body[field] === false) continue;
      context.addIssue({
        code: 'custom',
        path: [field],
        message: 'a line that never settles has no other control',
        input: body[field],
      });
    }
  });
export type SettlementControlBody = z.output<typeof settlementControlSchema>;

/** PUT /sandbox/settlement-config: the share of lines booked a night late, and its seed. */
export const settlementTimingSchema = z.object({
  latePercent: z.number().min(0).max(100),
  seed: z.number().int().min(0).max(0xffff_ffff).optional(),
});
