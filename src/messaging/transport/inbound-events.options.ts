/**
 * The options of the inbound-events transport (inbound-events.transport.ts): the consumer, the
 * codec and the dead-letter sink it is given, and its limits and timings.
 */
import type { AppLogger } from '../../logging/logger.js';
import type { PartitionConsumer } from './consumer.port.js';
import type { DeadLetterSink } from '../dead-letter.port.js';
import type { OrderSequencing } from './delivery-engine.js';
import type { InboundEventCodec } from '../messaging.ports.js';
import type { RetryPolicy } from './retry-policy.js';
import type { InboundEventsMetrics } from './transport.metrics.js';

export interface InboundEventsTransportOptions {
  /** The consumer-group client, e.g. createKafkaPartitionConsumer(...). */
  readonly consumer: PartitionConsumer;
  /** TOPIC_ORDERS. */
  readonly topic: string;
  /** Reads the topic's messages into events (INBOUND_EVENT_CODEC, from src/orders). */
  readonly codec: InboundEventCodec;
  readonly deadLetterSink: DeadLetterSink;
  readonly logger: AppLogger;
  /** MAX_IN_FLIGHT: messages held at once (queued + running). Default 256. */
  readonly maxInFlight?: number;
  /** MAX_IN_FLIGHT_BYTES: bytes of the messages held at once. Default: no byte bound. */
  readonly maxInFlightBytes?: number;
  /**
   * ORDER_SEQUENCING: `key` (default) runs different keys of a partition in parallel;
   * `partition` runs one message per partition at a time (safe but slow).
   */
  readonly sequencing?: OrderSequencing;
  /** RETRY_MAX_ATTEMPTS / RETRY_MAX_DURATION and the back-off. */
  readonly retry?: Partial<RetryPolicy>;
  /** Back-off of a failing dead-letter sink (retried until shutdown). */
  readonly sinkRetry?: { readonly baseDelayMs: number; readonly maxDelayMs: number };
  /** Commit cadence. Default 200 ms. */
  readonly commitIntervalMs?: number;
  /** Commit early after this many completions. Default 500. */
  readonly commitEveryCompletions?: number;
  /** How long running handlers may take to finish at shutdown. Default 20 s. */
  readonly drainTimeoutMs?: number;
  /**
   * Bound of the final commit, and again of leaving the group. Default 4 s, so that a
   * shutdown takes at most drainTimeoutMs + 8 s = 28 s (inside Kubernetes' default 30 s).
   */
  readonly closeStepTimeoutMs?: number;
  /**
   * Where a group without committed offsets starts: true = the oldest retained event (no
   * event published before the first start is skipped). Default true.
   */
  readonly fromBeginning?: boolean;
  readonly metrics?: InboundEventsMetrics;
  readonly random?: () => number;
  /**
   * The consumer counts as stuck (and the transport crashes) when it showed no sign of life
   * (a fetch back, a heartbeat, a join, a batch) for this long while starting or consuming.
   * A healthy consumer shows one at least every fetch wait (KAFKA_FETCH_MAX_WAIT) or
   * heartbeat interval; a rebalance may take up to the rebalance time-out (60 s) and one
   * request up to the request time-out (30 s). Default 120 s.
   */
  readonly stuckAfterMs?: number;
  /**
   * /health/ready says Kafka is unreachable when the consumer showed no sign of life for this
   * long: a connected consumer shows one at least every fetch wait (1 s by default) or
   * heartbeat interval (at most 3 s). Default 10 s.
   */
  readonly unreachableAfterMs?: number;
}
