import type { InboundMessage } from '../../messaging/messaging.ports.js';
import { Tracing, type TraceSpan } from '../../tracing/tracing.js';
import type { OrderEvent, OrderEventType } from '../../events/order-event.schema.js';

/** Where an event was read: recorded with it once it took effect. */
export interface EventSource {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as decimal text. */
  readonly offset: string;
  /**
   * When the worker took this delivery up (handed to its handler): the order's timeline
   * places the event there, before the calls and status events it caused.
   */
  readonly readAt?: Date;
}

/** Where `message` was read, taken up at `readAt` (now). */
export function sourceOf(message: InboundMessage, readAt: Date = new Date()): EventSource {
  return { topic: message.topic, partition: message.partition, offset: message.offset, readAt };
}

/** Spans of commands made without one (tests, tools): a new trace each, recorded nowhere. */
const UNTRACED = Tracing.off();

/** A validated order event on its way to its handler: the event, where it was read, its span. */
export class OrderCommand<T extends OrderEventType = OrderEventType> {
  constructor(
    readonly event: OrderEvent<T>,
    readonly source: EventSource,
    /** 1 for the first delivery. */
    readonly attempt = 1,
    /**
     * The span handling this delivery (orders.consumer.ts): its headers go to the Payflow
     * call, onto the status events and onto the payment a creation makes.
     */
    readonly trace: TraceSpan = UNTRACED.start('order.handle'),
  ) {}

  get eventId(): string {
    return this.event.eventId;
  }

  get orderId(): string {
    return this.event.orderId;
  }
}

/** What the engine's log lines say of a command (no personal data). */
export function commandLogContext(command: OrderCommand, type: string) {
  const { eventId, orderId } = command;
  return { eventId, orderId, type, traceId: command.trace.traceId };
}
