/**
 * What the outbox relay can be told (options, metrics hooks) and what its flush answers,
 * apart from the relay itself so that the application, the metrics module and the CLI can
 * name them without the relay's machinery.
 */
import type { OutboxLanes } from './outbox.repository.js';

export interface OutboxRelayOptions {
  /** Rows per batch (one producer.send, one transaction). Default 500. */
  readonly batchSize?: number;
  /**
   * Passes of the relay loop in flight at once (pipelining): a pass starts when rows are
   * announced even while earlier ones still wait for Kafka, up to this many; it claims its
   * rows when the send before it is over. A key's rows are never in two passes at once
   * (RelayPublisher). 1: one pass at a time. Default 3: one committing, one sending, one
   * waiting for the broker.
   */
  readonly pipelineDepth?: number;
  /** Pause after a pass that published something. Default 50 ms. */
  readonly busyPollMs?: number;
  /**
   * Pause after a pass that found nothing, while the relay LISTENs for wake-ups: the
   * safety net that finds rows nobody announced. `notify()`, another replica's NOTIFY and
   * a writer's NOTIFY cut it short. Default 30 s.
   */
  readonly idlePollMs?: number;
  /**
   * The pause after a pass that found nothing while rows flowed lately (within
   * `rebalanceIntervalMs` × 5), or while the LISTEN connection is down: under load a relay
   * polls as it always did, so that rows whose writer wakes it late (at the end of a
   * long pass of its own) wait no longer than before. Default 500 ms.
   */
  readonly activePollMs?: number;
  /**
   * How often bucket ownership is revisited (take free buckets, give back extra ones)
   * while rows flow. An idle relay revisits it with its idle pass instead, and at once
   * when a relay joins or leaves (they say so by NOTIFY). Default 2 s.
   */
  readonly rebalanceIntervalMs?: number;
  /**
   * Topics whose rows come in bulk (the nightly settlement events): they have a lane of
   * their own, so that a large night never delays a status event. Default none.
   */
  readonly bulkTopics?: readonly string[];
  /** Most rows of the bulk topics a pass publishes, over all its buckets. Default 2,000. */
  readonly bulkBatchSize?: number;
  /** Back-off of a bucket whose send failed: first and largest delay. Default 100 ms / 5 s. */
  readonly retryInitialMs?: number;
  readonly retryMaxMs?: number;
  /** Published rows older than this many days are deleted. Default 7. */
  readonly pruneAfterDays?: number;
  /** How often the prune runs. Default 1 h. */
  readonly pruneIntervalMs?: number;
  /** How often `metrics.pending` is sampled while rows flow (idle: with the idle pass). Default 5 s. */
  readonly metricsIntervalMs?: number;
  /** `flush()` budget when none is given (graceful shutdown). Default 10 s. */
  readonly flushTimeoutMs?: number;
  /** How long `stop()` waits for in-flight batches before releasing the locks. Default 15 s. */
  readonly stopTimeoutMs?: number;
  /** Wake the other replicas' relays too (Postgres NOTIFY), at most once per this many ms; 0 = never. Default 20. */
  readonly notifyThrottleMs?: number;
}

/** Hooks for whoever exports metrics (Prometheus etc.); all optional. */
export interface OutboxRelayMetrics {
  /** `count` rows of `bucket` were published. */
  published?(count: number, bucket: number): void;
  /** Pending rows right now, and the age of the oldest one (null when none is pending). */
  pending?(count: number, oldestAgeSeconds: number | null): void;
  /** A batch of `bucket` could not be published; it is retried with back-off. */
  publishFailed?(bucket: number, error: unknown): void;
  /** Number of buckets this replica owns, after every rebalance. */
  bucketsOwned?(count: number): void;
}

export const OUTBOX_RELAY_OPTIONS = Symbol('OUTBOX_RELAY_OPTIONS');
export const OUTBOX_RELAY_METRICS = Symbol('OUTBOX_RELAY_METRICS');

export interface OutboxFlushOptions {
  /** Only these buckets (default: all). The CLI flushes the buckets of the keys it wrote. */
  readonly buckets?: readonly number[];
}

export interface OutboxFlushResult {
  /** True when every row that was pending when flush() started is published. */
  readonly drained: boolean;
  /** Rows this flush published (it may publish rows newer than its start, too). */
  readonly published: number;
  /** Rows from before the start that are still pending (0 when drained). */
  readonly remaining: number;
}

/** Something that can push the outbox out now; the relay is one. */
export interface OutboxFlusher {
  flush(timeoutMs?: number, options?: OutboxFlushOptions): Promise<OutboxFlushResult>;
}

export type RelaySettings = Required<OutboxRelayOptions>;

const DEFAULTS: RelaySettings = {
  batchSize: 500,
  pipelineDepth: 3,
  busyPollMs: 50,
  idlePollMs: 30_000,
  activePollMs: 500,
  rebalanceIntervalMs: 2_000,
  bulkTopics: [],
  bulkBatchSize: 2_000,
  retryInitialMs: 100,
  retryMaxMs: 5_000,
  pruneAfterDays: 7,
  pruneIntervalMs: 3_600_000,
  metricsIntervalMs: 5_000,
  flushTimeoutMs: 10_000,
  stopTimeoutMs: 15_000,
  notifyThrottleMs: 20,
};

/** The options given, the defaults for the rest (an option set to undefined is not given). */
export function relaySettings(options: OutboxRelayOptions): RelaySettings {
  const given = Object.fromEntries(
    Object.entries(options).filter(([, entry]) => entry !== undefined),
  ) as Partial<RelaySettings>;
  return { ...DEFAULTS, ...given };
}

/** A pass's lanes over `buckets`: every topic of a bucket `batchSize` rows, the bulk topics `bulkBatchSize` in all. */
export function passLanes(
  settings: Pick<RelaySettings, 'batchSize' | 'bulkTopics' | 'bulkBatchSize'>,
  buckets: readonly number[],
): OutboxLanes {
  return {
    limit: settings.batchSize,
    bulkTopics: settings.bulkTopics,
    bulkLimit: Math.max(1, Math.ceil(settings.bulkBatchSize / Math.max(1, buckets.length))),
  };
}
