/**
 * The outbox relay's loop: publishes the rows that state changes wrote into `outbox` (in the
 * same transaction as the change) through the `MessageProducer`, then marks them published.
 * Its parts: BucketOwnership (which buckets this replica publishes), RelayWakeup (the
 * signal that cuts its sleep short), BucketBackoff (a failing bucket waits, the others go
 * on); the SQL is OutboxRepository's and RelayLockRepository's.
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
 *
 * Latency and idling. The relay sleeps between passes (`busyPollMs` after a pass that
 * published) and `notify()` wakes it at once: writers call it, through OutboxCommitted
 * (outbox-committed.ts), after their transaction committed (RelayWakeup also wakes the other replicas by NOTIFY, which the process's one
 * LISTEN connection delivers). An idle relay sleeps `idlePollMs` (30 s): its idle pass is
 * the safety net for rows nobody announced, and bucket ownership, revisited every
 * `rebalanceIntervalMs` while rows flow, is revisited with it, or at once when a relay
 * joins or leaves, or when this replica's lock connection is lost (Postgres restarted:
 * every second until it answers). While rows flow, or the LISTEN connection is down, an empty pass is
 * followed by `activePollMs` (500 ms) as before, so load sees no added latency.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_LOGGER } from '../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../logging/logger.js';
import { describeError } from '../errors/app-error.js';
import { backoffDelay } from '../timing/backoff.js';
import { sleep, withinOrUndefined } from '../timing/sleep.js';
import { Database, type ListenHandle } from '../database/database.js';
import { MESSAGE_PRODUCER, type MessageProducer } from '../messaging/messaging.ports.js';
import { BucketBackoff, publishedBy, type BatchOutcome } from './bucket-backoff.js';
import { BucketOwnership } from './bucket-ownership.js';
import {
  OUTBOX_BUCKETS,
  OutboxRepository,
  type PendingOutboxMessage,
} from './outbox.repository.js';
import {
  RELAY_SIGNAL,
  RelayLockRepository,
  OUTBOX_NOTIFY_CHANNEL,
} from './relay-locks.repository.js';
import { RelaySchedule } from './relay-schedule.js';
import { RelayWakeup } from './relay-wakeup.js';
import { sendByTopic } from './topic-sends.js';
import {
  OUTBOX_RELAY_METRICS,
  OUTBOX_RELAY_OPTIONS,
  passLanes,
  relaySettings,
  type OutboxFlushOptions,
  type OutboxFlushResult,
  type OutboxFlusher,
  type OutboxRelayMetrics,
  type OutboxRelayOptions,
  type RelaySettings,
} from './relay.options.js';

export {
  OUTBOX_RELAY_METRICS,
  OUTBOX_RELAY_OPTIONS,
  type OutboxFlushOptions,
  type OutboxFlushResult,
  type OutboxRelayMetrics,
  type OutboxRelayOptions,
} from './relay.options.js';
export { OUTBOX_NOTIFY_CHANNEL } from './relay-locks.repository.js';

const ALL_BUCKETS: readonly number[] = Array.from({ length: OUTBOX_BUCKETS }, (_, b) => b);

/** How soon a rebalance that failed (no lock connection to be had) is tried again. */
const REBALANCE_RETRY_MS = 1_000;

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

@Injectable()
export class OutboxRelay implements OutboxFlusher {
  private readonly settings: RelaySettings;
  private readonly metrics: OutboxRelayMetrics;
  private readonly logger: AppLogger;
  private readonly locks = new RelayLockRepository();
  private readonly wakeup: RelayWakeup;
  private readonly ownership: BucketOwnership;
  private readonly backoff: BucketBackoff;

  private running = false;
  private loopDone: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;
  private readonly schedule: RelaySchedule;
  private nextPruneAt = 0;
  private maintenance: Promise<void> | null = null;
  private listenHandle: ListenHandle | null = null;
  /** When a rebalance that failed (Postgres away) is tried again; undefined: none failed. */
  private rebalanceRetryAt: number | undefined;

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(MESSAGE_PRODUCER) private readonly producer: MessageProducer,
    @Inject(OutboxRepository) private readonly outbox: OutboxRepository,
    @Optional() @Inject(OUTBOX_RELAY_OPTIONS) options?: OutboxRelayOptions,
    @Optional() @Inject(OUTBOX_RELAY_METRICS) metrics?: OutboxRelayMetrics,
    @Optional() @Inject(APP_LOGGER) logger?: AppLogger,
  ) {
    this.settings = relaySettings(options ?? {});
    this.schedule = new RelaySchedule(this.settings, () => this.listenHandle?.listening === true);
    this.metrics = metrics ?? {};
    this.logger = (logger ?? silentLogger()).child({ component: 'outbox-relay' });
    const isRunning = (): boolean => this.running;
    this.wakeup = new RelayWakeup({
      sql: database.sql,
      locks: this.locks,
      throttleMs: this.settings.notifyThrottleMs,
      isRunning,
      onMembersChanged: () => this.schedule.askRebalance(),
      logger: this.logger,
    });
    this.backoff = new BucketBackoff({
      initialMs: this.settings.retryInitialMs,
      maxMs: this.settings.retryMaxMs,
      metrics: this.metrics,
      logger: this.logger,
    });
    this.ownership = new BucketOwnership({
      pool: database.pool,
      locks: this.locks,
      isRunning,
      onDisowned: (bucket) => this.backoff.forget(bucket),
      // Claim the buckets again at once, not at the next scheduled rebalance (an idle
      // relay's is up to idlePollMs away); while Postgres is still away that fails and is
      // tried again every REBALANCE_RETRY_MS.
      onLost: () => {
        this.schedule.askRebalance();
        this.wakeup.wake();
      },
      logger: this.logger,
    });
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Buckets this replica owns right now (sorted). */
  ownedBuckets(): number[] {
    return this.ownership.buckets();
  }

  /** Starts publishing in the background. Idempotent; resolves once buckets were claimed. */
  async start(): Promise<void> {
    if (this.stopping) await this.stopping;
    if (this.running) return;
    this.running = true;
    this.schedule.reset();
    this.nextPruneAt = Date.now() + Math.min(60_000, this.settings.pruneIntervalMs);
    const claimed = this.listen().then(async () => {
      await this.rebalance();
      // The others give back what is above their new fair share, then take what is free.
      await this.wakeup.announce(RELAY_SIGNAL.MEMBERS);
    });
    this.loopDone = claimed.then(() => this.loop());
    await claimed;
    this.logger.debug({ buckets: this.ownedBuckets() }, 'outbox relay started');
  }

  /**
   * Stops the background loop, waits (up to `stopTimeoutMs`) for the batches in flight and
   * releases the bucket locks, so that other replicas take the buckets over. Idempotent.
   */
  async stop(): Promise<void> {
    if (!this.running) {
      if (this.stopping) await this.stopping;
      return;
    }
    this.running = false;
    this.wakeup.wake();
    this.stopping = (async () => {
      await withinOrUndefined(
        Promise.all([this.loopDone, this.maintenance]).then(() => undefined),
        this.settings.stopTimeoutMs,
      );
      this.metrics.bucketsOwned?.(0);
      this.wakeup.reset();
      const owned = this.ownership.size;
      await this.ownership.release();
      if (owned > 0) await this.wakeup.announce(RELAY_SIGNAL.MEMBERS);
      await this.listenHandle?.close().catch(() => undefined);
      this.listenHandle = null;
      this.loopDone = null;
      this.logger.debug('outbox relay stopped');
    })();
    try {
      await this.stopping;
    } finally {
      this.stopping = null;
    }
  }

  /**
   * Wakes the relay, and through Postgres NOTIFY the other replicas' relays: something was
   * just committed to the outbox. Cheap (throttled); call it after every such commit.
   */
  notify(): void {
    this.schedule.active();
    this.wakeup.notify();
  }

  /**
   * Publishes every row that is pending now (in the given buckets), whoever owns their
   * buckets, within `timeoutMs`. Works whether or not the relay is started. Never throws
   * for a failing broker: it retries until the time is up and says what is left.
   */
  async flush(
    timeoutMs: number = this.settings.flushTimeoutMs,
    options: OutboxFlushOptions = {},
  ): Promise<OutboxFlushResult> {
    const deadline = Date.now() + timeoutMs;
    const buckets = [...new Set(options.buckets ?? ALL_BUCKETS)];
    const sql = this.database.sql;
    const upTo = await this.outbox.newestPendingId(sql, buckets);
    if (upTo === null) return { drained: true, published: 0, remaining: 0 };

    let published = 0;
    let idleRounds = 0;
    for (;;) {
      const pending = await this.outbox.pendingPerBucket(sql, upTo, buckets);
      const remaining = pending.reduce((sum, row) => sum + row.count, 0);
      const left = deadline - Date.now();
      if (remaining === 0) return { drained: true, published, remaining: 0 };
      if (left <= 0) return { drained: false, published, remaining };

      const round = this.publishBuckets(pending.map((row) => row.bucket)).then(
        (pass) => pass.outcomes,
        (error: unknown) => {
          const failed: BatchOutcome = { kind: 'failed', error };
          for (const row of pending) this.backoff.record(row.bucket, failed);
          return new Map<number, BatchOutcome>(pending.map((row) => [row.bucket, failed]));
        },
      );
      // A send can hang for as long as the producer retries; the flush does not wait past
      // its deadline (the round finishes, or rolls back, in the background).
      const outcomes = await withinOrUndefined(round, left);
      if (outcomes === undefined) continue;
      let progressed = false;
      for (const [bucket, outcome] of outcomes) {
        if (outcome.kind !== 'failed') this.backoff.record(bucket, outcome);
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

  /** Deletes published rows older than `pruneAfterDays`; returns how many. */
  async prune(): Promise<number> {
    const deleted = await this.outbox.prunePublished(
      this.database.sql,
      this.settings.pruneAfterDays,
    );
    if (deleted > 0) this.logger.info({ deleted }, 'pruned published outbox rows');
    return deleted;
  }

  /** Pending rows and the oldest one's age, as reported to `metrics.pending`. */
  pendingStats(): Promise<{ count: number; oldestAgeSeconds: number | null }> {
    return this.outbox.pendingStats(this.database.sql);
  }

  /** Hears the relays' channel on the process's shared LISTEN connection. */
  private async listen(): Promise<void> {
    try {
      this.listenHandle = await this.database.listen({
        channel: OUTBOX_NOTIFY_CHANNEL,
        onNotify: (payload) => {
          this.schedule.active();
          this.wakeup.received(payload);
        },
        onReconnect: () => {
          // NOTIFYs may have been missed while the connection was down: look now.
          this.schedule.askRebalance();
          this.wakeup.wake();
        },
      });
    } catch (error) {
      this.logger.warn({ error: describeError(error) }, 'outbox relay cannot LISTEN; it polls');
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        this.startMaintenance(Date.now());
        const pass = await this.publishOwned();
        if (!this.running) break;
        if (pass.rows > 0) this.schedule.active();
        if (this.rebalanceRetryAt !== undefined && Date.now() >= this.rebalanceRetryAt) {
          this.schedule.askRebalance();
        }
        if (this.schedule.takeRebalance()) {
          const changed = await this.rebalance();
          if (changed.given > 0) await this.wakeup.announce(RELAY_SIGNAL.MEMBERS);
          if (changed.gained > 0) continue;
        }
        if (pass.more) {
          // Full batches: go on at once, but let other work of the process run first.
          await new Promise<void>((resolve) => setImmediate(resolve));
          continue;
        }
        const retryAt = earliest(
          this.backoff.nextRetryAt(this.ownership.buckets(), Date.now()),
          this.rebalanceRetryAt,
        );
        await this.wakeup.wait(this.schedule.pauseAfter(pass.published, retryAt));
      } catch (error) {
        // Every step catches its own failures; this only keeps an unforeseen one from
        // ending the loop.
        this.logger.error({ error: describeError(error) }, 'outbox relay pass failed');
        await this.wakeup.wait(this.schedule.idlePause());
      }
    }
  }

  private async rebalance(): Promise<{ gained: number; given: number }> {
    const changed = await this.ownership.rebalance();
    this.metrics.bucketsOwned?.(this.ownership.size);
    // Postgres away (restarting): the buckets are claimed as soon as it answers again,
    // not at the next scheduled rebalance.
    this.rebalanceRetryAt = changed.failed ? Date.now() + REBALANCE_RETRY_MS : undefined;
    return changed;
  }

  /**
   * One batch from every owned bucket that is not backing off, in one transaction: fence
   * the buckets, lock their oldest pending rows, send them all in one send, mark them
   * published, commit. When the send fails, every row stays pending and the buckets back
   * off. One transaction and one send a pass instead of one a bucket: a row waits for at
   * most one send round, not for a round per group of buckets.
   */
  private async publishOwned(): Promise<{ published: number; rows: number; more: boolean }> {
    const now = Date.now();
    const due = this.ownedBuckets().filter((bucket) => this.backoff.isDue(bucket, now));
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
      for (const [bucket, outcome] of outcomes) this.backoff.record(bucket, outcome);
    }
    let published = 0;
    let rows = 0;
    for (const [bucket, outcome] of outcomes) {
      if (outcome.kind !== 'failed') this.backoff.record(bucket, outcome);
      published += publishedBy(outcome);
      if (outcome.kind === 'published' || outcome.kind === 'failed') rows += 1;
    }
    return { published, rows, more: full && published > 0 };
  }

  /**
   * One pass's transaction over `due`; `full` when a lane of a bucket filled its limit
   * (more rows are waiting).
   */
  private async publishBuckets(
    due: readonly number[],
  ): Promise<{ outcomes: Map<number, BatchOutcome>; full: boolean }> {
    let full = false;
    const outcomes = await this.database.transaction(async (tx) => {
      const outcomes = new Map<number, BatchOutcome>();
      const buckets = await this.locks.fence(tx, due);
      for (const bucket of due) outcomes.set(bucket, { kind: 'busy' });
      if (buckets.length === 0) return outcomes;
      const byBucket = new Map<number, PendingOutboxMessage[]>();
      for (const bucket of buckets) byBucket.set(bucket, []);
      const pending = await this.outbox.lockPending(tx, buckets, passLanes(this.settings, buckets));
      full = pending.full;
      for (const row of pending.rows) byBucket.get(row.bucket)?.push(row);
      // One send per topic for the whole pass: kafkajs makes one produce request per
      // leader of each send() and does not linger, so a send per bucket multiplied the
      // requests by 16. Per topic, because a topic can fail alone (its WRITE withdrawn):
      // its rows stay pending while the other topics' rows are published.
      const failedTopics = await sendByTopic(this.producer, pending.rows);
      const sent = pending.rows.filter((row) => !failedTopics.has(row.topic));
      await this.outbox.markPublished(
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
          this.backoff.record(bucket, failure);
          outcomes.set(bucket, failure);
        } else {
          outcomes.set(bucket, { kind: 'published', count: bucketRows.length });
        }
      }
      return outcomes;
    });
    return { outcomes, full };
  }

  /** Prune and metrics sampling run beside the publishing loop, one at a time. */
  private startMaintenance(now: number): void {
    if (this.maintenance) return;
    const prune = now >= this.nextPruneAt;
    // While idle the gauges are sampled with the idle pass only: nothing moves them.
    const sample = this.metrics.pending !== undefined && this.schedule.takeMetrics();
    if (!prune && !sample) return;
    if (prune) this.nextPruneAt = now + this.settings.pruneIntervalMs;
    this.maintenance = (async () => {
      if (prune) {
        await this.prune().catch((error: unknown) => {
          this.logger.warn({ error: describeError(error) }, 'outbox prune failed');
        });
      }
      if (sample) {
        await this.pendingStats()
          .then((stats) => this.metrics.pending?.(stats.count, stats.oldestAgeSeconds))
          .catch((error: unknown) => {
            this.logger.debug({ error: describeError(error) }, 'outbox metrics sample failed');
          });
      }
    })().finally(() => {
      this.maintenance = null;
    });
  }
}
