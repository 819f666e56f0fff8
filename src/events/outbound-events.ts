/**
 * Every event type payflow-bridge publishes, with its schema, its topic and its Kafka key.
 * A new outbound event is one schema and one line here; OutboxWriter refuses a type that
 * has none, and `npm run docs:contracts` publishes it.
 */
import type { z } from 'zod';
import type { UnstampedEvent } from './event-message.js';
import {
  documentAttachedSchema,
  documentRemovedSchema,
  eventDiscardedSchema,
  installmentAddedSchema,
  installmentChangedSchema,
  installmentRemovedSchema,
  installmentStatusChangedSchema,
  paymentCancelledSchema,
  paymentCreatedSchema,
  paymentCreationFailedSchema,
  paymentMarkedPaidSchema,
  paymentRefundedSchema,
  paymentResentSchema,
  paymentStatusChangedSchema,
  paymentTerminalFailedSchema,
  receiptPrintedSchema,
} from './payment-status-events.schema.js';
import {
  settlementExceptionSchema,
  settlementFileAvailableSchema,
  settlementLineSchema,
  settlementReconciledSchema,
} from './settlement-events.schema.js';

/** Which configured topic an event goes to. */
export type OutboundTopic = 'paymentStatus' | 'settlements';

export type EventCheck =
  { readonly ok: true; readonly key: string } | { readonly ok: false; readonly error: z.ZodError };

export interface OutboundEventSpec<S extends z.ZodType = z.ZodType> {
  readonly topic: OutboundTopic;
  /** The schema of the message value (the envelope). */
  readonly schema: S;
  /** What the Kafka key is, in words (for the contracts). */
  readonly keyDescription: string;
  /** Checks an envelope against the schema; on success, its Kafka key. */
  check(envelope: unknown): EventCheck;
}

function spec<S extends z.ZodType>(
  topic: OutboundTopic,
  schema: S,
  key: (event: z.output<S>) => string,
  keyDescription: string,
): OutboundEventSpec<S> {
  return {
    topic,
    schema,
    keyDescription,
    check(envelope) {
      const result = schema.safeParse(envelope);
      return result.success
        ? { ok: true, key: key(result.data) }
        : { ok: false, error: result.error };
    },
  };
}

const status = <S extends z.ZodType<{ readonly orderId: string }>>(
  schema: S,
): OutboundEventSpec<S> =>
  spec('paymentStatus', schema, (event) => event.orderId, 'the ERP order id (orderId)');

export const OUTBOUND_EVENTS = {
  'payment.created': status(paymentCreatedSchema),
  'payment.creation_failed': status(paymentCreationFailedSchema),
  'payment.status_changed': status(paymentStatusChangedSchema),
  'installment.status_changed': status(installmentStatusChangedSchema),
  'payment.terminal_failed': status(paymentTerminalFailedSchema),
  'payment.cancelled': status(paymentCancelledSchema),
  'payment.refunded': status(paymentRefundedSchema),
  'payment.marked_paid': status(paymentMarkedPaidSchema),
  'payment.resent': status(paymentResentSchema),
  'document.attached': status(documentAttachedSchema),
  'document.removed': status(documentRemovedSchema),
  'installment.added': status(installmentAddedSchema),
  'installment.changed': status(installmentChangedSchema),
  'installment.removed': status(installmentRemovedSchema),
  'receipt.printed': status(receiptPrintedSchema),
  'event.discarded': status(eventDiscardedSchema),
  'settlement.line': spec(
    'settlements',
    settlementLineSchema,
    (event) => event.paymentId ?? event.data.fileId,
    "the row's Payflow payment id (paymentId), or the file id (data.fileId) when it has none",
  ),
  'settlement.file_available': spec(
    'settlements',
    settlementFileAvailableSchema,
    (event) => event.organizationId,
    'the organization id (organizationId)',
  ),
  'settlement.exception': spec(
    'settlements',
    settlementExceptionSchema,
    (event) => event.paymentId,
    'the Payflow payment id (paymentId)',
  ),
  'settlement.reconciled': spec(
    'settlements',
    settlementReconciledSchema,
    (event) => event.organizationId,
    'the organization id (organizationId)',
  ),
} as const satisfies Record<string, OutboundEventSpec>;

export type OutboundEventType = keyof typeof OUTBOUND_EVENTS;

/** `T` with every object and array in it read-only, so a builder may pass what it holds. */
type Immutable<T> = T extends readonly (infer U)[]
  ? readonly Immutable<U>[]
  : T extends object
    ? { readonly [K in keyof T]: Immutable<T[K]> }
    : T;

/**
 * The `data` of an event of type `T`, as its schema takes it: a builder that renames,
 * drops or mistypes a field fails `tsc`, not OutboxWriter's check at run time.
 */
export type OutboundEventData<T extends OutboundEventType> = Immutable<
  z.input<(typeof OUTBOUND_EVENTS)[T]['schema']>['data']
>;

/**
 * An outbound event before its id and time: its type and its data as one typed pair (a
 * union over the types in `T`, each with the data of its schema).
 */
export type TypedOutboundEvent<T extends OutboundEventType = OutboundEventType> = {
  readonly [K in T]: Omit<UnstampedEvent<K>, 'data'> & { readonly data: OutboundEventData<K> };
}[T];

export const OUTBOUND_EVENT_TYPES = Object.keys(OUTBOUND_EVENTS) as OutboundEventType[];

export function isOutboundEventType(type: string): type is OutboundEventType {
  return Object.hasOwn(OUTBOUND_EVENTS, type);
}
