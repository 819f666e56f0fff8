/**
 * The back-off of each bucket whose batch could not be published (wholly, or a topic of it:
 * e.g. its WRITE withdrawn): its pending rows stay pending and the bucket waits (100 ms
 * doubling to 5 s by default) before the relay tries it again, while the other buckets go
 * on. Also where the relay's per-bucket outcomes are counted and logged: one warning when
 * the relay's first bucket starts failing and one info line when its last one publishes
 * again (not a line per bucket and retry; the details are at debug).
 */
import { describeError } from '../errors/app-error.js';
import { backoffDelay } from '../timing/backoff.js';
import type { AppLogger } from '../logging/logger.js';
import type { OutboxRelayMetrics } from './relay.options.js';

/** What one pass did with one bucket. */
export type BatchOutcome =
  | { readonly kind: 'published'; readonly count: number }
  | { readonly kind: 'empty' }
  | { readonly kind: 'busy' }
  | {
      readonly kind: 'failed';
      readonly error: unknown;
      /** Rows of the bucket published all the same (the topics whose send succeeded). */
      readonly published?: number;
    };

/** Rows an outcome published (a failed bucket may have published its other topics' rows). */
export function publishedBy(outcome: BatchOutcome): number {
  if (outcome.kind === 'published') return outcome.count;
  return outcome.kind === 'failed' ? (outcome.published ?? 0) : 0;
}

export interface BucketBackoffOptions {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly metrics: OutboxRelayMetrics;
  readonly logger: AppLogger;
}

export class BucketBackoff {
  private readonly failures = new Map<number, number>();
  private readonly retryAt = new Map<number, number>();
  /** The relay's failing streak: when it started and how many batches failed in it. */
  private streak: { readonly since: number; failedBatches: number } | undefined;

  constructor(private readonly options: BucketBackoffOptions) {}

  /** Whether `bucket` may be tried at `now` (it is not backing off). */
  isDue(bucket: number, now: number): boolean {
    return (this.retryAt.get(bucket) ?? 0) <= now;
  }

  /** The earliest future retry of `buckets`, or undefined when none backs off. */
  nextRetryAt(buckets: Iterable<number>, now: number): number | undefined {
    let next: number | undefined;
    for (const bucket of buckets) {
      const at = this.retryAt.get(bucket);
      if (at !== undefined && at > now && (next === undefined || at < next)) next = at;
    }
    return next;
  }

  /** The bucket went to another replica: its streak is not ours any more. */
  forget(bucket: number): void {
    this.failures.delete(bucket);
    this.retryAt.delete(bucket);
    this.endStreakIfOver();
  }

  record(bucket: number, outcome: BatchOutcome): void {
    const { metrics, logger } = this.options;
    switch (outcome.kind) {
      case 'published':
        metrics.published?.(outcome.count, bucket);
        this.clear(bucket);
        return;
      case 'empty':
        this.clear(bucket);
        return;
      case 'busy':
        return;
      case 'failed': {
        if (outcome.published !== undefined && outcome.published > 0) {
          metrics.published?.(outcome.published, bucket);
        }
        const failures = (this.failures.get(bucket) ?? 0) + 1;
        this.failures.set(bucket, failures);
        const delay = backoffDelay(failures, this.options.initialMs, this.options.maxMs);
        this.retryAt.set(bucket, Date.now() + delay);
        metrics.publishFailed?.(bucket, outcome.error);
        const fields = { bucket, failures, retryInMs: delay, error: describeError(outcome.error) };
        if (this.streak === undefined) {
          this.streak = { since: Date.now(), failedBatches: 1 };
          logger.warn(fields, 'outbox batch not published; the rows stay pending and are retried');
        } else {
          this.streak.failedBatches++;
          logger.debug(fields, 'outbox batch not published; the rows stay pending');
        }
        return;
      }
    }
  }

  private clear(bucket: number): void {
    if (this.failures.delete(bucket)) {
      this.retryAt.delete(bucket);
      this.options.logger.debug({ bucket }, 'outbox bucket publishes again');
      this.endStreakIfOver();
    }
  }

  /** The last failing bucket publishes again (or went to another replica). */
  private endStreakIfOver(): void {
    if (this.streak === undefined || this.failures.size > 0) return;
    const { since, failedBatches } = this.streak;
    this.streak = undefined;
    this.options.logger.info(
      { failingForMs: Date.now() - since, failedBatches },
      'outbox publishes again',
    );
  }
}
