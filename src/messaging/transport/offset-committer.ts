/**
 * The delivery engine's commits: per partition, the first offset not yet done
 * (PartitionOffsetTracker) is committed `commitIntervalMs` after something changed, sooner
 * after `commitEveryCompletions` completions, one commit request at a time. A failed commit
 * (expected around every rebalance) is retried by the next one. Kept apart from the engine,
 * which decides what runs; this decides what is committed and when.
 *
 * The round is armed by a change (a completion, a new partition end, a start-over, a failed
 * commit), not by a clock: an idle worker has nothing to commit and no lag that moves, and a
 * 200 ms interval woke it five times a second for nothing.
 */
import type { AppLogger } from '../../logging/logger.js';
import { withTimeout } from '../../timing/sleep.js';
import type { PartitionConsumer, TopicPartition, TopicPartitionOffset } from './consumer.port.js';
import { describeError } from '../../errors/app-error.js';
import { KafkaAuthorizationError } from '../security/kafka-authorization.js';
import { PartitionOffsetTracker } from './offset-tracker.js';
import type { InboundEventsMetrics } from './transport.metrics.js';

export interface OffsetCommitterOptions {
  readonly consumer: Pick<PartitionConsumer, 'commit'>;
  readonly commitIntervalMs: number;
  readonly commitEveryCompletions: number;
  readonly logger: AppLogger;
  readonly metrics: InboundEventsMetrics;
  /** The partitions assigned now, by partition key. */
  readonly assigned: () => ReadonlyMap<string, TopicPartition>;
  /** Draining: no more commit rounds after the current one (the final commit follows). */
  readonly draining: () => boolean;
}

export const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

export class OffsetCommitter {
  private readonly trackers = new Map<string, PartitionOffsetTracker>();
  private readonly highWatermarks = new Map<string, bigint>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private committing: Promise<void> | undefined;
  private commitAgain = false;
  private completionsSinceCommit = 0;
  private failedCommits = 0;
  private commitCount = 0;

  constructor(private readonly options: OffsetCommitterOptions) {}

  /** Commits that succeeded so far. */
  get commits(): number {
    return this.commitCount;
  }

  /** From now on, a change arms a commit round `commitIntervalMs` later. */
  start(): void {
    this.running = true;
  }

  /** Arms the next commit round, unless one is armed already or the committer stopped. */
  private scheduleRound(): void {
    if (!this.running || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.commitSoon();
    }, this.options.commitIntervalMs);
    this.timer.unref();
  }

  /** The tracker of partition `key` in this assignment, created on its first batch. */
  trackerFor(key: string): PartitionOffsetTracker {
    let tracker = this.trackers.get(key);
    if (tracker === undefined) {
      tracker = new PartitionOffsetTracker();
      this.trackers.set(key, tracker);
    }
    return tracker;
  }

  /** The current tracker of partition `key` (undefined once revoked). */
  trackerOf(key: string): PartitionOffsetTracker | undefined {
    return this.trackers.get(key);
  }

  /** The partition's end as the last fetch saw it (for the lag gauge). */
  sawHighWatermark(key: string, offset: bigint): void {
    if (this.highWatermarks.get(key) === offset) return;
    this.highWatermarks.set(key, offset);
    this.scheduleRound();
  }

  /** The partition was revoked: its tracker is no longer committed from. */
  forget(key: string): void {
    this.trackers.delete(key);
    this.highWatermarks.delete(key);
  }

  /** The client starts over from the committed offsets: commit again what is done. */
  startOver(): void {
    for (const tracker of this.trackers.values()) tracker.committed = undefined;
    this.scheduleRound();
  }

  /** `offset` of `tracker` took effect; commits soon after enough completions. */
  completed(tracker: PartitionOffsetTracker, offset: bigint): void {
    // A stale tracker (partition revoked meanwhile) is no longer committed from.
    if (tracker.complete(offset)) {
      this.completionsSinceCommit++;
      this.scheduleRound();
    }
  }

  /** Commits now when `commitEveryCompletions` completions wait for it. */
  commitIfDue(): void {
    if (this.completionsSinceCommit >= this.options.commitEveryCompletions) this.commitSoon();
  }

  commitSoon(): void {
    if (this.committing !== undefined) {
      this.commitAgain = true;
      return;
    }
    this.committing = this.commitLoop().finally(() => {
      this.committing = undefined;
    });
  }

  /**
   * The last commit of a stop: waits for the commit in progress, then commits every
   * watermark, within `timeoutMs` in all. Returns what it committed (nothing on failure).
   */
  async commitFinal(timeoutMs: number): Promise<readonly TopicPartitionOffset[]> {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + timeoutMs;
    try {
      await withTimeout(this.committing ?? Promise.resolve(), timeoutMs);
    } catch {
      // A commit stuck in the client's retries: the final commit below supersedes it.
    }
    const offsets = this.candidates(true);
    if (offsets.length === 0) return [];
    try {
      const left = Math.max(100, deadline - Date.now());
      await withTimeout(this.options.consumer.commit(offsets), left);
      return offsets;
    } catch (error) {
      this.options.logger.warn(
        { error: describeError(error) },
        'order events: final commit failed',
      );
      return [];
    }
  }

  private async commitLoop(): Promise<void> {
    do {
      this.commitAgain = false;
      const offsets = this.candidates(false);
      this.completionsSinceCommit = 0;
      this.reportLag();
      if (offsets.length === 0) continue;
      const trackers = offsets.map((o) => this.trackers.get(tpKey(o.topic, o.partition)));
      const started = Date.now();
      try {
        await this.options.consumer.commit(offsets);
        this.commitCount++;
        this.options.logger.debug(
          { partitions: offsets.length, durationMs: Date.now() - started },
          'order events: committed',
        );
        offsets.forEach((offset, index) => {
          const tracker = trackers[index];
          // Only if the partition was not revoked and re-assigned meanwhile.
          if (
            tracker !== undefined &&
            this.trackers.get(tpKey(offset.topic, offset.partition)) === tracker
          ) {
            const value = BigInt(offset.offset);
            if (tracker.committed === undefined || value > tracker.committed)
              tracker.committed = value;
          }
        });
      } catch (error) {
        // Expected around every rebalance (the generation changes): warn once per streak.
        // A denial (an ACL withdrawn) is warned about once by KafkaAuthorizationStatus.
        this.failedCommits++;
        const level =
          !(error instanceof KafkaAuthorizationError) &&
          (this.failedCommits === 1 || this.failedCommits % 100 === 0)
            ? 'warn'
            : 'debug';
        this.options.logger[level](
          {
            error: describeError(error),
            partitions: offsets.length,
            failedInARow: this.failedCommits,
          },
          'order events: commit failed; retrying with the next commit',
        );
        this.scheduleRound();
        return;
      }
      this.failedCommits = 0;
    } while (this.commitAgain && !this.options.draining());
  }

  /** Watermarks of assigned partitions that moved past their last commit (or all: `force`). */
  private candidates(force: boolean): TopicPartitionOffset[] {
    const offsets: TopicPartitionOffset[] = [];
    for (const [key, tp] of this.options.assigned()) {
      const tracker = this.trackers.get(key);
      if (tracker === undefined) continue;
      const offset = force ? tracker.watermark() : tracker.commitCandidate();
      if (offset !== undefined) offsets.push({ ...tp, offset: offset.toString() });
    }
    return offsets;
  }

  private reportLag(): void {
    for (const [key, tp] of this.options.assigned()) {
      const high = this.highWatermarks.get(key);
      const watermark = this.trackers.get(key)?.watermark();
      if (high === undefined || watermark === undefined) continue;
      const lag = high > watermark ? high - watermark : 0n;
      this.options.metrics.partitionLag(tp.topic, tp.partition, Number(lag));
    }
  }
}
