import type { InboundMessage } from './messaging.ports.js';
import type { DeadLetterReason } from '../errors/app-error.js';

/** What the transport hands over when an event cannot take effect. */
export interface DeadLetter {
  readonly message: InboundMessage;
  readonly reason: DeadLetterReason;
  /** One human-readable line, free of secrets and personal data. */
  readonly error: string;
  readonly attempts: number;
  /** From the envelope when it parsed, else the Kafka key. */
  readonly orderId: string | null;
  readonly eventId: string | null;
  readonly eventType: string | null;
  readonly failedAt: Date;
}

/**
 * What the sink did with a letter: `stored` it now, or found it `already_stored` (the same
 * topic, partition and offset, delivered again after a crash or rebalance) and wrote
 * nothing. A sink that resolves without saying counts as `stored`.
 */
export type DeadLetterOutcome = 'stored' | 'already_stored';

/**
 * Makes a dead letter durable: once `deadLetter` resolves, the event is on its way to the
 * dead-letter topic (through the outbox), its order is blocked so that later events follow
 * it, and the consumer may commit past it. Idempotent per (topic, partition, offset).
 */
export interface DeadLetterSink {
  deadLetter(letter: DeadLetter): Promise<DeadLetterOutcome | void>;
}

export const DEAD_LETTER_SINK = Symbol('DEAD_LETTER_SINK');
