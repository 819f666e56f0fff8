/**
 * payflow-bridge's own view of a message broker. kafkajs is looking for maintainers
 * (tulios/kafkajs #1603), so nothing outside src/messaging imports it: handlers, the
 * outbox relay and the dead-letter code see only these interfaces.
 */
import type { BaseRpcContext } from '@nestjs/microservices';

/** A message as consumed, with its coordinates. */
export interface InboundMessage {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset, as decimal text (offsets are 64-bit). */
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Broker timestamp, milliseconds since the epoch, as text. */
  readonly timestamp: string;
}

/** A message to publish. */
export interface OutboundMessage {
  readonly topic: string;
  readonly key: string | Buffer | null;
  readonly value: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Publishes messages; resolves once the broker acknowledged all of them (acks = all). */
export interface MessageProducer {
  connect(): Promise<void>;
  send(messages: readonly OutboundMessage[]): Promise<void>;
  disconnect(): Promise<void>;
}

export const MESSAGE_PRODUCER = Symbol('MESSAGE_PRODUCER');

/**
 * One consumed message read into an event: what the transport dispatches, and what it
 * names in logs and dead letters. The transport is generic; the feature whose events it
 * carries supplies the codec (INBOUND_EVENT_CODEC), so src/messaging knows no event type.
 */
export interface DecodedEvent<P = unknown> {
  /** The event type: the pattern of the handler it goes to. */
  readonly type: string;
  readonly eventId: string;
  /** The id events are ordered by (the Kafka key, e.g. the orderId). */
  readonly key: string;
  /** What the handler gets as payload. */
  readonly payload: P;
}

/** Reads the transport's messages into events, and builds the handler's context. */
export interface InboundEventCodec<P = unknown, C extends BaseRpcContext = BaseRpcContext> {
  /** Every event type: the transport refuses to start unless each has exactly one handler. */
  readonly eventTypes: readonly string[];
  /**
   * Throws an AppError whose `deadLetterReason` says why (invalid_json, invalid_event) when
   * the message is not an event of the contract.
   */
  decode(message: InboundMessage): DecodedEvent<P>;
  /** The `key` of a message that could not be decoded, from its Kafka key; null if none. */
  keyOfUndecodable(key: Buffer | null): string | null;
  /** The handler's `@Ctx()` for this attempt (1 = first). */
  context(message: InboundMessage, attempt: number): C;
}

export const INBOUND_EVENT_CODEC = Symbol('INBOUND_EVENT_CODEC');
