/**
 * The outbox relay's publishing: one pass's transaction over a set of buckets (fence them,
 * lock each lane's oldest pending rows, send them per topic, mark the sent ones published,
 * commit), the pass over the buckets this replica owns, and `flush`'s rounds of passes over
 * any buckets until they are drained or the time is up. When it runs is the relay loop's
 * business (outbox.relay.ts); the SQL is OutboxRepository's and RelayLockRepository's.
 *
 * Ordering. Rows are bucketed by a hash of their key (OutboxRepository). A pass's
 * transaction first takes the transaction-level "fence" lock of each bucket it publishes,
 * then locks each one's oldest pending rows (FOR UPDATE SKIP LOCKED), sends them with one
 * send per topic, marks those sent published and commits. `flush()` takes the fence
 * exclusively: one transaction at a time per bucket. The relay loop's passes are
 * pipelined (several in flight, `pipelineDepth`): they take the fence shared, and only
 * for buckets this replica's lock connection still owns (RelayLockRepository.fenceOwned),
 * so no other process publishes the bucket meanwhile; among themselves, a pass sends no
 * row of a key (of a topic) that another pass in flight has locked (`held`): it leaves
 * those rows pending, locked until its commit, and they go out in a pass after the holder
 * ended. So one key's messages of a topic are never in two sends at once and leave in the
 * order they were written, whichever process publishes them; a send that fails keeps its
 * rows pending and locked until its transaction ends, so no later row of those keys can
 * overtake them, and the retry takes them first (they are the lane's oldest).
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
 * for a settlement night of 100,000 rows; one pipelined pass at a time carries bulk rows,
 * so the night never fills the pipeline. Order is kept per key within a topic.
 */
import { backoffDelay } from '../timing/backoff.js';
import { sleep, withinOrUndefined } from '../timing/sleep.js';
import type { Database, Sql } from '../database/database.js';
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
  /** A bucket's send failed (it backs off): the loop looks again when its retry is due. */
  readonly failed: boolean;
  /**
   * Rows left for a later pass because another pass in flight held their key: worth
   * another pass once that one is done.
   */
  readonly blocked: boolean;
}

const NOTHING: PassResult = { published: 0, rows: 0, more: false, failed: false, blocked: false };

/** A key's lane: its rows of one topic keep their order (null keys count as one key). */
function keyLane(row: PendingOutboxMessage): string {
  const key = row.key === null ? '\u0001' : `k${row.key.toString()}`;
  return `${row.topic}\u0000${key}`;
}

export class RelayPublisher {
  /**
   * The key lanes (topic + key) of every row the pipelined passes in flight have locked,
   * with how many passes hold each. A pass sends no row of a lane another pass holds: that
   * pass's rows of the key are older (or locked, and so skipped by this pass's SKIP LOCKED
   * while newer ones were taken) and must leave first, or stay pending first if their send
   * fails. Held until the holding pass's transaction has ended.
   */
  private readonly held = new Map<string, number>();
  /**
   * The passes' claims (fence, lock rows, read and take the holds) and releases of holds
   * run one at a time, in this chain, so that what a claim's SKIP LOCKED skipped and what
   * it finds held agree: a claim whose statement ran before another's could otherwise be
   * answered after it, and a pass that ended (its send failed, its rows pending again)
   * could give up its holds between a later claim's statement and its look at the holds.
   */
  private turn: Promise<void> = Promise.resolve();
  /**
   * The send of the pass started last. kafkajs's idempotent producer has one produce
   * request in flight per broker anyway, so a pass claims its rows only once the send
   * before it is over (its commit runs beside the next pass's claim and send): then each
   * claim takes every row committed until the broker is free, in one request, instead of
   * several small passes queueing their requests one behind the other.
   */
  private lastSend: Promise<void> = Promise.resolve();
  /** Owned buckets fenced exclusively once since they were gained (see fenceOwned)... */
  private readonly confirmed = new Set<number>();
  /** ...by the lock connection of this pid: a new lock connection gains every bucket anew. */
  private confirmedBy: number | null = null;
  /**
   * A pipelined pass in flight may carry bulk rows (settlement lines): one at a time, so
   * that the passes beside it carry status events only and a night never fills the pipeline.
   */
  private bulkInFlight = false;

  constructor(private readonly options: RelayPublisherOptions) {}

  /** Runs `work` after the claims and releases before it (see `turn`). */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const result = this.turn.then(work);
    this.turn = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** `bucket` was given back or lost: the next owner fences it exclusively first. */
  forget(bucket: number): void {
    this.confirmed.delete(bucket);
  }

  /**
   * One pipelined pass over the owned buckets that are not backing off, in one
   * transaction: fence them (shared, while `ownerPid`, this replica's lock connection,
   * still owns them), wait for the send of the pass before (`lastSend`), lock their oldest
   * pending rows, leave the rows whose key another pass in flight holds, send the rest with
   * one send per topic, mark them published, commit. Several passes run at once (the relay
   * loop starts one when rows are announced, up to `pipelineDepth`): a row waits for the
   * send in flight, not for a whole pass and the start of the next.
   */
  async publishOwned(owned: readonly number[], ownerPid: number | null): Promise<PassResult> {
    const { backoff } = this.options;
    const now = Date.now();
    const due = owned.filter((bucket) => backoff.isDue(bucket, now));
    if (due.length === 0 || ownerPid === null) return NOTHING;
    let outcomes: Map<number, BatchOutcome>;
    let full = false;
    let blocked = false;
    const holds: string[] = [];
    try {
      const pass = await this.publishPipelined(due, ownerPid, holds);
      outcomes = pass.outcomes;
      full = pass.full;
      blocked = pass.blocked;
    } catch (error) {
      // The transaction failed (a lost connection, a failed commit): every row stays pending.
      outcomes = new Map(due.map((bucket) => [bucket, { kind: 'failed', error }]));
      for (const [bucket, outcome] of outcomes) backoff.record(bucket, outcome);
    } finally {
      // The transaction has ended: its rows are published, or pending and unlocked.
      await this.inTurn(() => {
        for (const lane of holds) {
          const count = (this.held.get(lane) ?? 1) - 1;
          if (count > 0) this.held.set(lane, count);
          else this.held.delete(lane);
        }
        return Promise.resolve();
      });
    }
    let published = 0;
    let rows = 0;
    let failed = false;
    for (const [bucket, outcome] of outcomes) {
      if (outcome.kind !== 'failed') backoff.record(bucket, outcome);
      else failed = true;
      published += publishedBy(outcome);
      if (outcome.kind === 'published' || outcome.kind === 'failed') rows += 1;
    }
    return { published, rows, more: full && published > 0, failed, blocked };
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

  /** A pipelined pass's transaction (publishOwned); `holds` gets the lanes it held. */
  private async publishPipelined(
    due: readonly number[],
    ownerPid: number,
    holds: string[],
  ): Promise<{ outcomes: Map<number, BatchOutcome>; full: boolean; blocked: boolean }> {
    const { settings } = this.options;
    if (this.confirmedBy !== ownerPid) {
      this.confirmed.clear();
      this.confirmedBy = ownerPid;
    }
    const carriesBulk = !this.bulkInFlight && settings.bulkTopics.length > 0;
    if (carriesBulk) this.bulkInFlight = true;
    try {
      return await this.pipelinedTransaction(due, ownerPid, holds, carriesBulk);
    } finally {
      if (carriesBulk) this.bulkInFlight = false;
    }
  }

  private async pipelinedTransaction(
    due: readonly number[],
    ownerPid: number,
    holds: string[],
    carriesBulk: boolean,
  ): Promise<{ outcomes: Map<number, BatchOutcome>; full: boolean; blocked: boolean }> {
    const { database, outbox, locks, settings } = this.options;
    let full = false;
    let blocked = false;
    const previousSend = this.lastSend;
    let sent: () => void = () => undefined;
    this.lastSend = new Promise<void>((resolve) => {
      sent = resolve;
    });
    try {
      const outcomes = await database.transaction(async (tx) => {
        await previousSend;
        const claim = await this.inTurn(async () => {
          const exclusive = due.map((bucket) => !this.confirmed.has(bucket));
          const buckets = await locks.fenceOwned(tx, due, exclusive, ownerPid);
          for (const bucket of buckets) this.confirmed.add(bucket);
          const lanes = passLanes(settings, buckets);
          const pending = await outbox.lockPending(
            tx,
            buckets,
            carriesBulk ? lanes : { ...lanes, bulkLimit: 0 },
          );
          const busyLanes = new Set<string>();
          for (const row of pending.rows) {
            const lane = keyLane(row);
            if (this.held.has(lane)) busyLanes.add(lane);
          }
          for (const lane of new Set(pending.rows.map(keyLane))) {
            this.held.set(lane, (this.held.get(lane) ?? 0) + 1);
            holds.push(lane);
          }
          return { buckets, pending, busyLanes };
        });
        full = claim.pending.full;
        blocked = claim.busyLanes.size > 0;
        const waiting = new Set<number>();
        const rows = claim.pending.rows.filter((row) => {
          if (!claim.busyLanes.has(keyLane(row))) return true;
          waiting.add(row.bucket);
          return false;
        });
        return this.sendAndMark(tx, due, claim.buckets, rows, waiting, sent);
      });
      return { outcomes, full, blocked };
    } finally {
      sent();
    }
  }

  /**
   * One exclusive pass's transaction over `due` (flush); `full` when a lane of a bucket
   * filled its limit (more rows are waiting).
   */
  private async publishBuckets(
    due: readonly number[],
  ): Promise<{ outcomes: Map<number, BatchOutcome>; full: boolean }> {
    const { database, outbox, locks, settings } = this.options;
    let full = false;
    const outcomes = await database.transaction(async (tx) => {
      const buckets = await locks.fence(tx, due);
      const pending = await outbox.lockPending(tx, buckets, passLanes(settings, buckets));
      full = pending.full;
      return this.sendAndMark(tx, due, buckets, pending.rows);
    });
    return { outcomes, full };
  }

  /**
   * Sends `rows` (of the fenced `buckets`) and marks the sent ones published in `tx`; each
   * bucket of `due` gets its outcome (not fenced, or only rows left for another pass in
   * flight, `waiting`: busy).
   */
  private async sendAndMark(
    tx: Sql,
    due: readonly number[],
    buckets: readonly number[],
    rows: readonly PendingOutboxMessage[],
    waiting: ReadonlySet<number> = new Set(),
    onSent: () => void = () => undefined,
  ): Promise<Map<number, BatchOutcome>> {
    const { producer, outbox, backoff } = this.options;
    const outcomes = new Map<number, BatchOutcome>();
    for (const bucket of due) outcomes.set(bucket, { kind: 'busy' });
    if (buckets.length === 0) return outcomes;
    const byBucket = new Map<number, PendingOutboxMessage[]>();
    for (const bucket of buckets) byBucket.set(bucket, []);
    for (const row of rows) byBucket.get(row.bucket)?.push(row);
    // One send per topic for the whole pass: kafkajs makes one produce request per
    // leader of each send() and does not linger, so a send per bucket multiplied the
    // requests by 16. Per topic, because a topic can fail alone (its WRITE withdrawn):
    // its rows stay pending while the other topics' rows are published.
    const failedTopics = await sendByTopic(producer, rows);
    onSent();
    const sent = rows.filter((row) => !failedTopics.has(row.topic));
    await outbox.markPublished(
      tx,
      sent.map((row) => row.id),
    );
    for (const [bucket, bucketRows] of byBucket) {
      const failed = bucketRows.find((row) => failedTopics.has(row.topic));
      const published =
        bucketRows.length - bucketRows.filter((row) => failedTopics.has(row.topic)).length;
      if (bucketRows.length === 0) {
        outcomes.set(bucket, { kind: waiting.has(bucket) ? 'busy' : 'empty' });
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
  }
}
