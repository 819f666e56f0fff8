/**
 * The one shape of every envelope event payflow-bridge publishes (payment status and
 * settlement topics): a UTF-8 JSON value `{ eventId, type, occurredAt, organizationId,
 * orderId, paymentId, data }` with the headers `content-type: application/json` and
 * `x-event-type: <type>`, and the W3C `traceparent` / `tracestate` of the step that made it
 * when there is one (CONTRACT §8). Building only; OutboxWriter checks an event against its
 * schema.
 */
import { randomUUID } from 'node:crypto';
import type { OutboundMessage } from '../messaging/messaging.ports.js';

/** The W3C trace headers an event carries (src/tracing's TraceHeaders, structurally). */
export interface EventTrace {
  readonly traceparent: string;
  readonly tracestate?: string;
}

/** An event before it gets its id and time. */
export interface UnstampedEvent<T extends string = string> {
  readonly type: T;
  readonly organizationId: string | null;
  readonly orderId: string | null;
  /** Payflow's payment id, or null when there is none. */
  readonly paymentId: string | null;
  readonly data: Readonly<Record<string, unknown>>;
  /** The trace it continues; not part of the envelope, written as message headers. */
  readonly trace?: EventTrace;
}

export interface EventEnvelope<T extends string = string> extends UnstampedEvent<T> {
  readonly eventId: string;
  readonly occurredAt: string;
}

/** The event with a fresh id and `now` as its time, fields in their wire order. */
export function stampEvent<T extends string>(
  event: UnstampedEvent<T>,
  now: Date = new Date(),
): EventEnvelope<T> {
  return {
    eventId: randomUUID(),
    type: event.type,
    occurredAt: now.toISOString(),
    organizationId: event.organizationId,
    orderId: event.orderId,
    paymentId: event.paymentId,
    data: event.data,
  };
}

/** The Kafka message of an envelope, with the trace headers of `trace` when given. */
export function eventMessage(
  topic: string,
  key: string,
  envelope: EventEnvelope,
  trace?: EventTrace,
): OutboundMessage {
  return {
    topic,
    key,
    value: JSON.stringify(envelope),
    headers:
      trace === undefined
        ? { 'content-type': 'application/json', 'x-event-type': envelope.type }
        : trace.tracestate === undefined
          ? {
              'content-type': 'application/json',
              'x-event-type': envelope.type,
              traceparent: trace.traceparent,
            }
          : {
              'content-type': 'application/json',
              'x-event-type': envelope.type,
              traceparent: trace.traceparent,
              tracestate: trace.tracestate,
            },
  };
}
