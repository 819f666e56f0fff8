/**
 * CONTRACT §4: what a dead letter looks like on `${TOPIC_ORDERS}.dlq`: the original key and
 * value, the original headers, and the x-dlq-* headers. Pure functions for the sink
 * implementation (which publishes through the outbox) and for `dlq replay`.
 */
import { oneLine } from '../errors/one-line.js';
import type { OutboundMessage } from './messaging.ports.js';
import type { DeadLetter } from './dead-letter.port.js';

export const DLQ_HEADER = {
  reason: 'x-dlq-reason',
  error: 'x-dlq-error',
  originalTopic: 'x-dlq-original-topic',
  originalPartition: 'x-dlq-original-partition',
  originalOffset: 'x-dlq-original-offset',
  attempts: 'x-dlq-attempts',
  failedAt: 'x-dlq-failed-at',
} as const;

export const DLQ_HEADER_PREFIX = 'x-dlq-';

/** Longest x-dlq-error value (characters). */
export const DLQ_ERROR_MAX_LENGTH = 1000;

/** The dead-letter topic of an input topic. */
export function deadLetterTopicFor(topic: string): string {
  return `${topic}.dlq`;
}

/**
 * The headers of a dead letter: the original message's headers (minus any stale x-dlq-*
 * left by an earlier dead-lettering of a replayed message) plus the seven x-dlq-* headers.
 */
export function buildDeadLetterHeaders(letter: DeadLetter): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(letter.message.headers)) {
    if (!name.toLowerCase().startsWith(DLQ_HEADER_PREFIX)) headers[name] = value;
  }
  headers[DLQ_HEADER.reason] = letter.reason;
  headers[DLQ_HEADER.error] = oneLine(letter.error, DLQ_ERROR_MAX_LENGTH) || 'unknown error';
  headers[DLQ_HEADER.originalTopic] = letter.message.topic;
  headers[DLQ_HEADER.originalPartition] = String(letter.message.partition);
  headers[DLQ_HEADER.originalOffset] = letter.message.offset;
  headers[DLQ_HEADER.attempts] = String(letter.attempts);
  headers[DLQ_HEADER.failedAt] = letter.failedAt.toISOString();
  return headers;
}

/**
 * The dead letter as a message for `${topic}.dlq` with the original key and value. A null
 * value (a tombstone) becomes an empty value: OutboundMessage cannot carry null.
 */
export function buildDeadLetterMessage(letter: DeadLetter, dlqTopic?: string): OutboundMessage {
  return {
    topic: dlqTopic ?? deadLetterTopicFor(letter.message.topic),
    key: letter.message.key,
    value: letter.message.value ?? Buffer.alloc(0),
    headers: buildDeadLetterHeaders(letter),
  };
}
