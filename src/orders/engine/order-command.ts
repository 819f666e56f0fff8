import type { InboundMessage } from '../../messaging/messaging.ports.js';
import type { OrderEvent, OrderEventType } from '../order-event.schema.js';

/** Where an event was read: recorded with it once it took effect. */
export interface EventSource {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as decimal text. */
  readonly offset: string;
}

export function sourceOf(message: InboundMessage): EventSource {
  return { topic: message.topic, partition: message.partition, offset: message.offset };
}

/** A validated order event on its way to its handler. */
export abstract class OrderCommand<T extends OrderEventType = OrderEventType> {
  constructor(
    readonly event: OrderEvent<T>,
    readonly source: EventSource,
    /** 1 for the first delivery. */
    readonly attempt = 1,
  ) {}

  get eventId(): string {
    return this.event.eventId;
  }

  get orderId(): string {
    return this.event.orderId;
  }
}

/** What handling an event came to. */
export type CommandOutcome = 'applied' | 'duplicate';
