/** The order pipeline: events in flight, sequencing, retries. */
import { z } from 'zod';
import { byteSize, duration, positiveInt } from '../env-values.js';

/**
 * Default bound on the bytes of order events held at once (MAX_IN_FLIGHT_BYTES), sized for
 * the image's 192 MB V8 heap (--max-old-space-size=192). Ordinary events are a few KiB, so
 * MAX_IN_FLIGHT (256) binds long before this does; it is there for bursts of
 * `order.document_attached`, whose base64 documents make events of megabytes. A held event
 * costs its raw bytes (a Buffer, outside the heap but in the container's memory) and, while
 * its handler runs, about twice that on the heap (the parsed JSON string, the request body
 * sent to Payflow). 32 MiB held is then at most ~64 MiB of heap for events, a third of
 * 192 MB, leaving the rest for the fetch buffer (kafkajs maxBytes 10 MiB), the outbox, the
 * webhook receiver and Nest itself; and it still admits six 5 MB documents at once, so one
 * large upload does not stall the orders behind it. An event larger than the bound is
 * still taken when nothing else is held.
 */
export const DEFAULT_MAX_IN_FLIGHT_BYTES = 32 * 1024 * 1024;

export const pipelineEnv = z.object({
  MAX_IN_FLIGHT: positiveInt.default(256),
  /** Bytes of order events held at once, beside MAX_IN_FLIGHT (see DEFAULT_MAX_IN_FLIGHT_BYTES). */
  MAX_IN_FLIGHT_BYTES: byteSize.default(DEFAULT_MAX_IN_FLIGHT_BYTES),
  /**
   * V8's old generation grows by this share over what survived its last full collection
   * (0: V8's own factor, up to 4x with a large heap limit). See src/main.ts.
   */
  HEAP_GROWTH_PERCENT: z.coerce.number().int().min(0).max(400).default(100),
  /** key: different orders of a partition in parallel; partition: one event per partition at a time. */
  ORDER_SEQUENCING: z
    .enum(['key', 'partition'], { message: 'must be key or partition' })
    .default('key'),
  RETRY_MAX_ATTEMPTS: positiveInt.default(10),
  RETRY_MAX_DURATION: duration.default(15 * 60_000),
});
