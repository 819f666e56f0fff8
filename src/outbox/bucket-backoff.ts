/**
 * The back-off of each bucket whose batch could not be published: its rows stay pending and
 * the bucket waits (100 ms doubling to 5 s by default) before the relay tries it again,
 * while the other buckets go on. Also where the relay's per-bucket outcomes are counted
 * and logged (a failing streak is logged once, then every 20th time).
 */
import { describeError } from '../common/app-error.js';
import { backoffDelay } from '../common/backoff.js';
import type { AppLogger } from '../common/logger.js';
import type { OutboxRelayMetrics } from './relay.options.js';

/** What one pass did with one bucket. */
export type BatchOutcome =
  | { readonly kind: 'published'; readonly count: number }
  | { readonly kind: 'empty' }
  | { readonly kind: 'busy' }
  | { readonly kind: 'failed'; readonly error: unknown };

export interface BucketBackoffOptions {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly metrics: OutboxRelayMetrics;
  readonly logger: AppLogger;
}

export class BucketBackoff {
  private readonly failures = new Map<number, number>();
  private readonly retryAt = new Map<number, number>();

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
        const failures = (this.failures.get(bucket) ?? 0) + 1;
        this.failures.set(bucket, failures);
        const delay = backoffDelay(failures, this.options.initialMs, this.options.maxMs);
        this.retryAt.set(bucket, Date.now() + delay);
        metrics.publishFailed?.(bucket, outcome.error);
        const fields = { bucket, failures, retryInMs: delay, error: describeError(outcome.error) };
        if (failures === 1 || failures % 20 === 0) {
          logger.warn(fields, 'outbox batch not published; the rows stay pending');
        } else {
          logger.debug(fields, 'outbox batch not published; the rows stay pending');
        }
        return;
      }
    }
  }

  private clear(bucket: number): void {
    if (this.failures.delete(bucket)) {
      this.retryAt.delete(bucket);
      this.options.logger.info({ bucket }, 'outbox bucket publishes again');
    }
  }
}
