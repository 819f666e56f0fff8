/**
 * The outbox relay's publishing: one pass's transaction over a set of buckets (fence them,
 * lock each lane's oldest pending rows, send them per topic, mark the sent ones published,
 * commit), the pass over the buckets this replica owns, and `flush`'s rounds of passes over
 * any buckets until they are drained or the time is up. When it runs is the relay loop's
 * business (outbox.relay.ts); the SQL is OutboxRepository's and RelayLockRepository's.
 *
 * Ordering. Rows are bucketed by a hash of their key (OutboxRepository). A bucket's rows
 * are published in id order, one batch at a time: a pass's transaction first takes the
 * transaction-level "fence" lock (pg_try_advisory_xact_lock) of each bucket it publishes,
 * then locks each one's oldest pending rows (FOR UPDATE SKIP LOCKED), sends them with one
 * send per topic, marks those sent published and commits. So one key's messages of a topic
 * leave in the order they were written, whichever process publishes them, and no row is
 * sent by two transactions at once.
 *
 * Delivery is at least once. A send that fails leaves its topic's rows pending (retried
 * with back-off; nothing is dropped or dead-lettered, however long it fails: e.g. the
 * topic's WRITE withdrawn until an operator grants it again), while the pass's other topics
 * are published. A crash, or a lost database connection, after
 * the broker acknowledged a batch but before its transaction committed publishes that
 * batch again: consumers dedupe on the envelope's `eventId`. In the steady state (no
 * crash, no failed commit) every row is published exactly once.
 *
 * Lanes. Each topic of a bucket is a lane: a pass takes up to `batchSize` rows of every
 * topic of a bucket and at most `bulkBatchSize` rows of the bulk topics (the settlement
 * events) over all buckets, so a status event waits for at most one pass's send, never
 * for a settlement night of 100,000 rows. Order is kept per key within a topic.
 */
import { backoffDelay } from '../timing/backoff.js';
import { sleep, withinOrUndefined } from '../timing/sleep.js';
import type { Database } from '../database/database.js';
import type { MessageProducer } from '../messaging/messaging.ports.js';
import { publishedBy, type BatchOutcome, type BucketBackoff } from './bucket-backoff.js';
import {
  OUTBOX_BUCKETS,
  type OutboxRepository,
  type PendingOutboxMessage,
} from './outbox.repository.js';
import type { RelayLockRepository } from './relay-locks.repository.js';
import { sendByTopic } from './topic-sends.js';
import {
  passLanes,
  type OutboxFlushOptions,
  type OutboxFlushResult,
  type RelaySettings,
} from './relay.options.js';

const ALL_BUCKETS: readonly number[] = Array.from({ length: OUTBOX_BUCKETS }, (_, b) => b);

export interface RelayPublisherOptions {
  readonly database: Database;
  readonly producer: MessageProducer;
  readonly outbox: OutboxRepository;
  readonly locks: RelayLockRepository;
  /** Where each bucket's outcome is recorded: a failing bucket waits, the others go on. */
  readonly backoff: BucketBackoff;
  readonly settings: RelaySettings;
}

/** What a pass over the owned buckets did: `more` when a lane filled its limit. */
export interface PassResult {
  readonly published: number;
  /** Buckets that had rows (published or failed): rows flow. */
  readonly rows: number;
  readonly more: boolean;
}

export class RelayPublisher {
  constructor(private readonly options: RelayPublisherOptions) {}

  /**
   * One batch from every owned bucket that is not backing off, in one transaction: fence
   * the buckets, lock their oldest pending rows, send them all in one send, mark them
   * published, commit. When the send fails, every row stays pending and the buckets back
   * off. One transaction and one send a pass instead of one a bucket: a row waits for at
   * most one send round, not for a round per group of buckets.
   */
  async publishOwned(owned: readonly number[]): Promise<PassResult> {
    const { backoff } = this.options;
    const now = Date.now();
    const due = owned.filter((bucket) => backoff.isDue(bucket, now));
    if (due.length === 0) return { published: 0, rows: 0, more: false };
    let outcomes: Map<number, BatchOutcome>;
    let full = false;
    try {
      const pass = await this.publishBuckets(due);
      outcomes = pass.outcomes;
      full = pass.full;
    } catch (error) {
      // The transaction failed (a lost connection, a failed commit): every row stays pending.
      outcomes = new Map(due.map((bucket) => [bucket, { kind: 'failed', error }]));
      for (const [bucket, outcome] of outcomes) backoff.record(bucket, outcome);
    }
    let published = 0;
    let rows = 0;
    for (const [bucket, outcome] of outcomes) {
      if (outcome.kind !== 'failed') backoff.record(bucket, outcome);
      published += publishedBy(outcome);
      if (outcome.kind === 'published' || outcome.kind === 'failed') rows += 1;
    }
    return { published, rows, more: full && published > 0 };
  }

  /**
   * Publishes every row that is pending now (in the given buckets), whoever owns their
   * buckets, within `timeoutMs`. Never throws for a failing broker: it retries until the
   * time is up and says what is left.
   */
  async flush(timeoutMs: number, options: OutboxFlushOptions): Promise<OutboxFlushResult> {
    const { database, outbox, backoff } = this.options;
    const deadline = Date.now() + timeoutMs;
    const buckets = [...new Set(options.buckets ?? ALL_BUCKETS)];
    const sql = database.sql;
    const upTo = await outbox.newestPendingId(sql, buckets);
    if (upTo === null) return { drained: true, published: 0, remaining: 0 };

    let published = 0;
    let idleRounds = 0;
    for (;;) {
      const pending = await outbox.pendingPerBucket(sql, upTo, buckets);
      const remaining = pending.reduce((sum, row) => sum + row.count, 0);
      const left = deadline - Date.now();
      if (remaining === 0) return { drained: true, published, remaining: 0 };
      if (left <= 0) return { drained: false, published, remaining };

      const round = this.publishBuckets(pending.map((row) => row.bucket)).then(
        (pass) => pass.outcomes,
        (error: unknown) => {
          const failed: BatchOutcome = { kind: 'failed', error };
          for (const row of pending) backoff.record(row.bucket, failed);
          return new Map<number, BatchOutcome>(pending.map((row) => [row.bucket, failed]));
        },
      );
      // A send can hang for as long as the producer retries; the flush does not wait past
      // its deadline (the round finishes, or rolls back, in the background).
      const outcomes = await withinOrUndefined(round, left);
      if (outcomes === undefined) continue;
      let progressed = false;
      for (const [bucket, outcome] of outcomes) {
        if (outcome.kind !== 'failed') backoff.record(bucket, outcome);
        const count = publishedBy(outcome);
        if (count > 0) {
          published += count;
          progressed = true;
        }
      }
      idleRounds = progressed ? 0 : idleRounds + 1;
      if (!progressed) {
        // Busy (another transaction publishes these buckets) or failing: wait a little.
        const pause = Math.min(deadline - Date.now(), backoffDelay(idleRounds, 20, 1_000));
        if (pause > 0) await sleep(pause);
      }
    }
  }

  /**
   * One pass's transaction over `due`; `full` when a lane of a bucket filled its limit
   * (more rows are waiting).
   */
  private async publishBuckets(
    due: readonly number[],
  ): Promise<{ outcomes: Map<number, BatchOutcome>; full: boolean }> {
    const { database, producer, outbox, locks, backoff, settings } = this.options;
    let full = false;
    const outcomes = await database.transaction(async (tx) => {
      const outcomes = new Map<number, BatchOutcome>();
      const buckets = await locks.fence(tx, due);
      for (const bucket of due) outcomes.set(bucket, { kind: 'busy' });
      if (buckets.length === 0) return outcomes;
      const byBucket = new Map<number, PendingOutboxMessage[]>();
      for (const bucket of buckets) byBucket.set(bucket, []);
      const pending = await outbox.lockPending(tx, buckets, passLanes(settings, buckets));
      full = pending.full;
      for (const row of pending.rows) byBucket.get(row.bucket)?.push(row);
      // One send per topic for the whole pass: kafkajs makes one produce request per
      // leader of each send() and does not linger, so a send per bucket multiplied the
      // requests by 16. Per topic, because a topic can fail alone (its WRITE withdrawn):
      // its rows stay pending while the other topics' rows are published.
      const failedTopics = await sendByTopic(producer, pending.rows);
      const sent = pending.rows.filter((row) => !failedTopics.has(row.topic));
      await outbox.markPublished(
        tx,
        sent.map((row) => row.id),
      );
      for (const [bucket, bucketRows] of byBucket) {
        const failed = bucketRows.find((row) => failedTopics.has(row.topic));
        const published =
          bucketRows.length - bucketRows.filter((row) => failedTopics.has(row.topic)).length;
        if (bucketRows.length === 0) {
          outcomes.set(bucket, { kind: 'empty' });
        } else if (failed !== undefined) {
          // The bucket backs off, its published rows counted. Recorded now (the caller
          // records the other outcomes after the commit).
          const failure: BatchOutcome = {
            kind: 'failed',
            error: failedTopics.get(failed.topic),
            published,
          };
          backoff.record(bucket, failure);
          outcomes.set(bucket, failure);
        } else {
          outcomes.set(bucket, { kind: 'published', count: bucketRows.length });
        }
      }
      return outcomes;
    });
    return { outcomes, full };
  }
}
