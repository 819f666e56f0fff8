/**
 * ERP order events (CONTRACT §2): the envelope and the data of every event type, as zod
 * schemas. This is the input boundary: a message that does not parse here never reaches a
 * handler (it is dead-lettered as invalid_json or invalid_event).
 *
 * Amounts are kept as the ERP sent them (decimal text or JSON number) and converted to
 * integer minor units by the mapping, which knows the currency.
 */
import { z } from 'zod';
import { isIsoDate } from '../timing/calendar.js';
import { isCurrency } from '../money/money.js';
import { InvalidEventError, InvalidJsonError } from '../errors/dead-letter.errors.js';
import { summarizeIssues } from '../errors/zod-issues.js';

export const ORDER_EVENT_TYPES = [
  'order.payment_requested',
  'order.cancelled',
  'order.refund_requested',
  'order.installment_added',
  'order.installment_changed',
  'order.installment_removed',
  'order.marked_paid',
  'order.payment_resend_requested',
  'order.document_attached',
  'order.document_removed',
  'order.terminal_receipt_requested',
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

const DECIMAL = /^[+-]?\d+(\.\d+)?$/;

/** "1249.50" or 1249.5: kept as given, converted exactly later. */
export const amountSchema = z.union([
  z.string().trim().regex(DECIMAL, { message: 'must be a decimal number such as 1249.50' }),
  z.number().finite(),
]);
export type Amount = z.infer<typeof amountSchema>;

const positiveAmount = amountSchema.refine((value) => Number(value) > 0, {
  message: 'must be greater than 0',
});
const nonNegativeAmount = amountSchema.refine((value) => Number(value) >= 0, {
  message: 'must not be negative',
});
const percent = amountSchema.refine((value) => Number(value) >= 0 && Number(value) <= 100, {
  message: 'must be a percentage from 0 to 100',
});

export const isoDateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD' })
  .refine(isIsoDate, { message: 'must be a real calendar date' });

export const currencySchema = z
  .string()
  .regex(/^[A-Z]{3}$/, { message: 'must be an ISO 4217 code such as NOK' })
  .refine(isCurrency, { message: 'is not an ISO 4217 currency with minor units' });

const ref = z.string().trim().min(1).max(200);

/** Longest `paymentRef` / `externalRef`, in characters (after trimming). */
export const PAYMENT_REFERENCE_MAX_LENGTH = 100;

/**
 * The payment's own references, `paymentRef` and `externalRef` of Payflow's create-payment
 * body (spec: optional strings, no limits shown). Strict in what we send: surrounding
 * spaces are trimmed, then 1–100 characters without control characters (they end up in
 * reports and the settlement CSV). Tolerant in what we read: `null` means not given, like
 * leaving the field out. Business references, not personal data (docs/assumptions.md).
 */
const paymentReference = z
  .string()
  .trim()
  .min(1, { message: 'must not be empty (leave the field out or send null instead)' })
  .max(PAYMENT_REFERENCE_MAX_LENGTH, {
    message: `must be at most ${PAYMENT_REFERENCE_MAX_LENGTH} characters`,
  })
  // The control characters (Unicode Cc: C0, DEL, C1), as a range every JSON Schema reads.
  // eslint-disable-next-line no-control-regex -- refusing them is the point
  .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, { message: 'must not contain control characters' })
  .nullish();
const text = (max: number) => z.string().max(max);

export const lineSchema = z.object({
  description: text(500),
  quantity: amountSchema.refine((value) => Number(value) > 0, {
    message: 'must be greater than 0',
  }),
  unitPriceNet: amountSchema,
  taxRate: percent,
  discountRate: percent.optional(),
  lineType: z.enum(['regular', 'shipping', 'part-sum']).optional(),
});

export const customerSchema = z.object({
  type: z.enum(['person', 'company']).optional(),
  firstName: text(200).optional(),
  lastName: text(200).optional(),
  companyName: text(200).optional(),
  email: z.string().email().optional(),
  phone: z.object({ countryCode: text(8), number: text(32) }).optional(),
  customerNumber: text(100).optional(),
  billingAddress: z
    .object({
      careOf: text(200).optional(),
      street: text(200).optional(),
      secondary: text(200).optional(),
      postalCode: text(20).optional(),
      city: text(200).optional(),
      country: text(100).optional(),
      countryCode: text(3).optional(),
    })
    .optional(),
});

export const vehicleSchema = z.object({
  role: z.enum(['new', 'tradeIn', 'other']),
  numberPlate: text(20).optional(),
  brand: text(100).optional(),
  model: text(100).optional(),
  color: text(50).optional(),
  year: z.union([z.string().max(4), z.number().int()]).optional(),
  vin: text(17).optional(),
});

export const plannedInstallmentSchema = z.object({
  /** ERP reference of the installment (added field); defaults to its 1-based position. */
  installmentRef: ref.optional(),
  date: isoDateSchema,
  amount: positiveAmount,
  lines: z.array(lineSchema).optional(),
});

export const installmentPlanSchema = z.union([
  z.array(plannedInstallmentSchema).min(1),
  z.object({
    count: z.number().int().min(1).max(120),
    firstDate: isoDateSchema,
    intervalMonths: z.number().int().min(1).max(24),
  }),
]);

export const paymentRequestedSchema = z.object({
  orderNumber: z.string().trim().min(1).max(100),
  customer: customerSchema,
  serviceAdvisorEmail: z.string().email().nullish(),
  vehicles: z.array(vehicleSchema).max(20).default([]),
  currency: currencySchema,
  lines: z.array(lineSchema).min(1).max(500),
  dueDate: isoDateSchema,
  installments: installmentPlanSchema.optional(),
  paymentMethodId: z.string().min(1).nullish(),
  profileId: z.string().min(1).nullish(),
  paymentDepartment: z.string().min(1).nullish(),
  invoiceNumber: text(100).optional(),
  customerReference: text(200).optional(),
  paymentRef: paymentReference.describe(
    "Payflow's payment.paymentRef: the ERP's own reference of this payment; " +
      'trimmed, 1-100 characters, no control characters; null or absent: not sent',
  ),
  externalRef: paymentReference.describe(
    "Payflow's payment.externalRef: the payment's reference in another system; " +
      'trimmed, 1-100 characters, no control characters; null or absent: not sent',
  ),
  invoiceComments: text(2000).nullish(),
  sendPaymentLink: z.boolean().optional(),
  sendPaymentReminder: z.boolean().optional(),
  redirect: z
    .object({
      successUrl: z.string().url().optional(),
      cancelUrl: z.string().url().optional(),
      cancelButtonText: text(100).optional(),
    })
    .optional(),
  sharebox: z.object({ plateNumber: text(20) }).optional(),
});
export type PaymentRequestedData = z.infer<typeof paymentRequestedSchema>;

export const cancelledSchema = z.object({ reason: text(1000).optional() });

export const refundLineSchema = lineSchema.omit({ discountRate: true, lineType: true });
export const refundRequestedSchema = z.object({
  refundId: ref,
  amountGross: positiveAmount,
  amountNet: nonNegativeAmount,
  currency: currencySchema,
  lines: z.array(refundLineSchema).optional(),
});

export const installmentAddedSchema = z.object({
  installmentRef: ref,
  date: isoDateSchema,
  amount: positiveAmount,
  lines: z.array(lineSchema).optional(),
});

export const installmentChangedSchema = z
  .object({
    installmentRef: ref,
    date: isoDateSchema.optional(),
    amount: positiveAmount.optional(),
    lines: z.array(lineSchema).optional(),
  })
  .refine(
    (data) => data.date !== undefined || data.amount !== undefined || data.lines !== undefined,
    {
      message: 'at least one of date, amount, lines must change',
    },
  );

export const installmentRemovedSchema = z.object({ installmentRef: ref });
export const markedPaidSchema = z.object({ note: text(1000).optional() });
export const resendRequestedSchema = z.object({
  paymentMethodId: z.string().min(1),
  terminalId: z.string().min(1).optional(),
  invoiceType: z.string().min(1).optional(),
});
export const documentAttachedSchema = z.object({
  documentRef: ref,
  fileName: z.string().trim().min(1).max(255),
  contentType: z.string().trim().min(1).max(255),
  contentBase64: z.string().min(1),
});
export const documentRemovedSchema = z.object({ documentRef: ref });
export const receiptRequestedSchema = z.object({ terminalId: z.string().min(1).optional() });

/** The data schema of every event type: exactly one per type (checked at start-up). */
export const ORDER_EVENT_DATA_SCHEMAS = {
  'order.payment_requested': paymentRequestedSchema,
  'order.cancelled': cancelledSchema,
  'order.refund_requested': refundRequestedSchema,
  'order.installment_added': installmentAddedSchema,
  'order.installment_changed': installmentChangedSchema,
  'order.installment_removed': installmentRemovedSchema,
  'order.marked_paid': markedPaidSchema,
  'order.payment_resend_requested': resendRequestedSchema,
  'order.document_attached': documentAttachedSchema,
  'order.document_removed': documentRemovedSchema,
  'order.terminal_receipt_requested': receiptRequestedSchema,
} as const satisfies Record<OrderEventType, z.ZodType>;

export type OrderEventData<T extends OrderEventType> = z.output<
  (typeof ORDER_EVENT_DATA_SCHEMAS)[T]
>;

/** Longest orderId, in characters (the Kafka key must be the orderId, so no longer either). */
export const ORDER_ID_MAX_LENGTH = 200;

export const envelopeSchema = z.object({
  eventId: z.string().uuid({ message: 'must be a UUID' }),
  type: z.string().min(1),
  occurredAt: z.string().datetime({ offset: true, message: 'must be an ISO 8601 date-time' }),
  // Sent as the X-Organization-Id header: HTTP carries no control characters, nothing
  // beyond Latin-1 reliably, and drops surrounding spaces (another organization's id).
  organizationId: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/, {
      message: 'must be printable ASCII without surrounding spaces (it is a header value)',
    })
    .nullish(),
  orderId: z.string().trim().min(1).max(ORDER_ID_MAX_LENGTH),
  // CONTRACT §10: a correction that takes the place of an earlier event of the same order,
  // one that can never take effect (dead-lettered invalid_event, mapping_failed or
  // rejected_by_payflow). Checked against the dead letters before the handler runs.
  supersedes: z
    .string()
    .uuid({ message: 'must be a UUID (the eventId of the event this one replaces)' })
    .optional()
    .describe(
      'the eventId of an earlier event of the same order, dead-lettered invalid_event, ' +
        'mapping_failed or rejected_by_payflow, that this event replaces: it takes effect in ' +
        'its place, the replaced one is discarded (event.discarded) and the events parked ' +
        'behind it follow. Otherwise this event is dead-lettered supersede_refused',
    ),
  data: z.record(z.string(), z.unknown()),
});

/** A validated event of one type. */
export interface OrderEvent<T extends OrderEventType = OrderEventType> {
  readonly eventId: string;
  readonly type: T;
  readonly occurredAt: string;
  readonly organizationId: string | null;
  readonly orderId: string;
  readonly data: OrderEventData<T>;
}

export type OrderEnvelope = z.output<typeof envelopeSchema> & {
  /**
   * Set by parseOrderEnvelope when the JSON text held no `\u0000` escape, the only way a
   * JSON string can hold NUL: then no string of the event does, and its data need not be
   * walked for one (see pathOfNul).
   */
  readonly nulFree?: true;
};
/** An envelope whose type is one of ORDER_EVENT_TYPES (its data not yet checked). */
export type ParsedOrderEnvelope = OrderEnvelope & { type: OrderEventType };

/**
 * Parses a Kafka message value into an envelope. Throws InvalidJsonError when the value
 * is not UTF-8 JSON, InvalidEventError when the envelope breaks the contract, the type is
 * not one of ORDER_EVENT_TYPES, or the Kafka key is not the envelope's orderId.
 */
export function parseOrderEnvelope(value: Buffer | null, key: Buffer | null): ParsedOrderEnvelope {
  if (value === null || value.length === 0) throw new InvalidJsonError('message has no value');
  let json: unknown;
  let text: string;
  try {
    text = UTF8.decode(value);
    json = JSON.parse(text);
  } catch (error) {
    throw new InvalidJsonError('message value is not UTF-8 JSON', { cause: error });
  }
  const result = envelopeSchema.safeParse(json);
  if (!result.success)
    throw new InvalidEventError(`invalid envelope: ${summarizeIssues(result.error)}`);
  // JSON.parse refuses a raw control character in a string, so NUL arrives only escaped.
  const nulFree = !text.includes('\\u0000');
  const envelope = nulFree ? { ...result.data, nulFree } : result.data;
  const nul = nulFree ? undefined : pathOfNul({ ...envelope, data: null }, []);
  if (nul !== undefined) throw new InvalidEventError(`invalid envelope: ${nul}: ${NUL_MESSAGE}`);
  if (envelope.supersedes === envelope.eventId) {
    throw new InvalidEventError(
      'invalid envelope: supersedes: must name another event than eventId',
      {
        metadata: { eventId: envelope.eventId },
      },
    );
  }
  if (!isOrderEventType(envelope.type)) {
    throw new InvalidEventError(`unknown event type "${envelope.type.slice(0, 100)}"`, {
      metadata: { eventId: envelope.eventId },
    });
  }
  if (key !== null && key.toString('utf8') !== envelope.orderId) {
    throw new InvalidEventError('Kafka key is not the event orderId', {
      metadata: { eventId: envelope.eventId },
    });
  }
  return { ...envelope, type: envelope.type };
}

export function isOrderEventType(type: string): type is OrderEventType {
  return (ORDER_EVENT_TYPES as readonly string[]).includes(type);
}

/** Validates an envelope's data against its type's schema into a typed event. */
export function parseOrderEvent<T extends OrderEventType>(
  envelope: OrderEnvelope & { type: T },
): OrderEvent<T> {
  const schema = ORDER_EVENT_DATA_SCHEMAS[envelope.type];
  const result = schema.safeParse(envelope.data);
  if (!result.success) {
    throw new InvalidEventError(
      `invalid ${envelope.type}: ${summarizeIssues(result.error, ['data'])}`,
      {
        metadata: { eventId: envelope.eventId },
      },
    );
  }
  const nul = envelope.nulFree === true ? undefined : pathOfNul(result.data, ['data']);
  if (nul !== undefined) {
    throw new InvalidEventError(`invalid ${envelope.type}: ${nul}: ${NUL_MESSAGE}`, {
      metadata: { eventId: envelope.eventId },
    });
  }
  return {
    eventId: envelope.eventId,
    type: envelope.type,
    occurredAt: envelope.occurredAt,
    organizationId: envelope.organizationId ?? null,
    orderId: envelope.orderId,
    data: result.data as OrderEventData<T>,
  };
}

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
/** Strict UTF-8 (a malformed byte sequence is an error, not U+FFFD); stateless, so shared. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The path of the first string holding NUL (U+0000), which Postgres text cannot store: an
 * event with one would fail at its first write and be retried as an unknown error until
 * its budget ends, instead of being refused. Iterative (nesting depth is the sender's).
 */
function pathOfNul(value: unknown, at: readonly string[]): string | undefined {
  const pending: [unknown, readonly string[]][] = [[value, at]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, path] = next;
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return path.join('.');
    } else if (node !== null && typeof node === 'object') {
      for (const [name, child] of Object.entries(node)) pending.push([child, [...path, name]]);
    }
  }
  return undefined;
}
