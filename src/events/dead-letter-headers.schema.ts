/**
 * A dead letter on `${TOPIC_ORDERS}.dlq` (CONTRACT §4): the original key and value, byte
 * for byte, the original headers, and the x-dlq-* headers described here.
 */
import { z } from 'zod';
import { DEAD_LETTER_REASONS } from '../errors/app-error.js';
import { DLQ_HEADER } from '../messaging/dead-letter-headers.js';

const decimalText = z.string().regex(/^\d+$/);

export const deadLetterHeadersSchema = z
  .object({
    [DLQ_HEADER.reason]: z.enum(DEAD_LETTER_REASONS),
    [DLQ_HEADER.error]: z.string().min(1).describe('one readable line, never personal data'),
    [DLQ_HEADER.originalTopic]: z.string().min(1),
    [DLQ_HEADER.originalPartition]: decimalText,
    [DLQ_HEADER.originalOffset]: decimalText,
    [DLQ_HEADER.attempts]: decimalText.describe('how many times it was tried'),
    [DLQ_HEADER.failedAt]: z.iso.datetime().describe('when it was given up'),
    traceparent: z.string().optional().describe('W3C Trace Context, as the event came'),
    tracestate: z.string().optional().describe('W3C Trace Context, as the event came'),
  })
  .catchall(z.string())
  .meta({
    title: 'dead letter headers',
    description:
      'Headers of a dead letter: the x-dlq-* headers beside the original headers of the event.',
  });
