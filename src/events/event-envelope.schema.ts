/**
 * Pieces shared by the schemas of the events payflow-bridge publishes: the envelope, its
 * headers, money and dates. Objects are strict: an event with a field its schema lacks is
 * refused by OutboxWriter, so the schemas (and the contracts generated from them) always
 * say exactly what is on the wire. The published JSON Schemas leave objects open, since
 * fields may be added (never renamed or removed).
 */
import { z } from 'zod';
import { NORMALIZED_STATUSES } from './normalized-status.js';

export const eventIdSchema = z.uuid().describe('unique per event: deduplicate on it');
export const occurredAtSchema = z.iso
  .datetime()
  .describe('when payflow-bridge wrote the event (ISO 8601, UTC)');

/** Exact decimal text in major units, beside a `currency` field. */
export const amountSchema = z
  .string()
  .regex(/^-?\d+(\.\d+)?$/)
  .describe('decimal text in major units with the decimals of the currency, e.g. "1249.50"');
export const currencySchema = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .describe('ISO 4217 code');
export const isoDateSchema = z.iso.date().describe('YYYY-MM-DD');
export const normalizedStatusSchema = z
  .enum(NORMALIZED_STATUSES)
  .describe("payflow-bridge's normalized payment status");
export const providerStatusSchema = z.string().describe("Payflow's raw status value");
export const previousProviderStatusSchema = z
  .string()
  .nullable()
  .describe("Payflow's status before the change, null when none was known");
/** The ERP event a command outcome answers. */
export const sourceEventIdSchema = z.uuid().describe('eventId of the ERP event that caused it');

/** The headers of an envelope event (CONTRACT §3, §8). */
export function eventHeadersSchema(type: string) {
  return z.strictObject({
    'content-type': z.literal('application/json'),
    'x-event-type': z.literal(type).describe('the type of the envelope'),
    traceparent: z.string().optional().describe('W3C Trace Context'),
    tracestate: z.string().optional().describe('W3C Trace Context'),
  });
}

const organizationIdSchema = z
  .string()
  .nullable()
  .describe('the organization at Payflow (X-Organization-Id), null when not known');
const orderIdSchema = z.string().min(1).describe('the ERP order id');
const paymentIdSchema = z.string().min(1).describe("Payflow's payment id");

/** A payment status event (CONTRACT §3): keyed by `orderId`. */
export function statusEventSchema<T extends string, D extends z.ZodType>(
  type: T,
  description: string,
  data: D,
) {
  return z
    .strictObject({
      eventId: eventIdSchema,
      type: z.literal(type),
      occurredAt: occurredAtSchema,
      organizationId: organizationIdSchema,
      orderId: orderIdSchema,
      paymentId: paymentIdSchema,
      data,
    })
    .meta({ title: type, description });
}

/** A status event about a payment Payflow never created: `paymentId` is null. */
export function paymentlessStatusEventSchema<T extends string, D extends z.ZodType>(
  type: T,
  description: string,
  data: D,
) {
  return statusEventSchema(type, description, data)
    .extend({ paymentId: z.null().describe('null: Payflow has no payment') })
    .meta({ title: type, description });
}

/** A settlement event (TOPIC_SETTLEMENTS): the organization is always known. */
export function settlementEventSchema<
  T extends string,
  O extends z.ZodType,
  P extends z.ZodType,
  D extends z.ZodType,
>(type: T, description: string, fields: { orderId: O; paymentId: P; data: D }) {
  return z
    .strictObject({
      eventId: eventIdSchema,
      type: z.literal(type),
      occurredAt: occurredAtSchema,
      organizationId: z.string().min(1).describe('the organization whose settlement file it is'),
      orderId: fields.orderId,
      paymentId: fields.paymentId,
      data: fields.data,
    })
    .meta({ title: type, description });
}
