/**
 * What the inbound-events transport reports, as a small interface so that prom-client (or
 * anything else) can be plugged in later without the transport knowing about it.
 */
import type { DeadLetterReason } from '../../errors/app-error.js';

export type ProcessOutcome = 'succeeded' | 'dead_lettered' | 'abandoned';
export type RetryCause = 'transient' | 'unknown' | 'dead_letter_sink';

export interface InboundEventsMetrics {
  /** Gauge: messages whose processing started and has not finished (incl. back-off waits). */
  inFlight(count: number): void;
  /** Gauge: messages accepted from Kafka and waiting for their key's turn. */
  queued(count: number): void;
  /** Gauge: bytes (key, value, headers) of the messages held: queued + in flight. */
  heldBytes(bytes: number): void;
  /** Gauge: high watermark minus the commit watermark of one partition. */
  partitionLag(topic: string, partition: number, lag: number): void;
  /** Counter: one message finished (or was given up at shutdown). */
  processed(outcome: ProcessOutcome): void;
  /**
   * Histogram: one decoded event finished, by its type (the codec's bounded set, or
   * `undecodable`) and outcome, in seconds from its first attempt, retries included.
   */
  handled(type: string, outcome: ProcessOutcome, seconds: number): void;
  /** Counter: one dead letter stored by the sink (a redelivery of a stored one is not counted). */
  deadLettered(reason: DeadLetterReason): void;
  /** Counter: one retry scheduled. */
  retried(cause: RetryCause): void;
  /** Counter: fetching paused because MAX_IN_FLIGHT or MAX_IN_FLIGHT_BYTES was reached. */
  fetchPaused(): void;
}

export const NO_METRICS: InboundEventsMetrics = {
  inFlight: () => undefined,
  queued: () => undefined,
  heldBytes: () => undefined,
  partitionLag: () => undefined,
  processed: () => undefined,
  handled: () => undefined,
  deadLettered: () => undefined,
  retried: () => undefined,
  fetchPaused: () => undefined,
};

/** Keeps the latest values in memory (tests, a /metrics stub, debugging). */
export class InMemoryInboundEventsMetrics implements InboundEventsMetrics {
  inFlightNow = 0;
  maxInFlight = 0;
  queuedNow = 0;
  maxQueuedPlusInFlight = 0;
  heldBytesNow = 0;
  maxHeldBytes = 0;
  readonly lag = new Map<string, number>();
  readonly outcomes: Record<ProcessOutcome, number> = {
    succeeded: 0,
    dead_lettered: 0,
    abandoned: 0,
  };
  readonly deadLetters = new Map<DeadLetterReason, number>();
  readonly retries: Record<RetryCause, number> = {
    transient: 0,
    unknown: 0,
    dead_letter_sink: 0,
  };
  pauses = 0;
  /** `type/outcome` → how many. */
  readonly handledByType = new Map<string, number>();

  inFlight(count: number): void {
    this.inFlightNow = count;
    this.maxInFlight = Math.max(this.maxInFlight, count);
    this.maxQueuedPlusInFlight = Math.max(this.maxQueuedPlusInFlight, count + this.queuedNow);
  }
  queued(count: number): void {
    this.queuedNow = count;
    this.maxQueuedPlusInFlight = Math.max(this.maxQueuedPlusInFlight, count + this.inFlightNow);
  }
  heldBytes(bytes: number): void {
    this.heldBytesNow = bytes;
    this.maxHeldBytes = Math.max(this.maxHeldBytes, bytes);
  }
  partitionLag(topic: string, partition: number, lag: number): void {
    this.lag.set(`${topic}/${partition}`, lag);
  }
  processed(outcome: ProcessOutcome): void {
    this.outcomes[outcome]++;
  }
  handled(type: string, outcome: ProcessOutcome): void {
    const key = `${type}/${outcome}`;
    this.handledByType.set(key, (this.handledByType.get(key) ?? 0) + 1);
  }
  deadLettered(reason: DeadLetterReason): void {
    this.deadLetters.set(reason, (this.deadLetters.get(reason) ?? 0) + 1);
  }
  retried(cause: RetryCause): void {
    this.retries[cause]++;
  }
  fetchPaused(): void {
    this.pauses++;
  }
}
