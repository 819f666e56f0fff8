/**
 * payflow-bridge's own view of a message broker. kafkajs is looking for maintainers
 * (tulios/kafkajs #1603), so nothing outside src/messaging imports it: handlers, the
 * outbox relay and the dead-letter code see only these interfaces.
 */

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
