/**
 * The outbox relay: publishes the rows that state changes wrote into `outbox` (in the same
 * transaction as the change) through the `MessageProducer`, then marks them published.
 *
 * Ordering. Rows are bucketed by a hash of their key (OutboxRepository). A bucket's rows
 * are published in id order, one batch at a time: a pass's transaction first takes the
 * transaction-level "fence" lock (pg_try_advisory_xact_lock) of each bucket it publishes,
 * then locks each one's oldest pending rows (FOR UPDATE SKIP LOCKED), sends all of them in
 * one send, marks them published and commits. So one key's messages leave in the order they
 * were written, whichever process publishes them, and no row is sent by two transactions
 * at once.
 *
 * Sharing the work. Several replicas may run the relay on one database. Each holds
 * session-level advisory locks (on one dedicated pool connection) for the buckets it owns,
 * takes at most its fair share (buckets / running relays, counted through a shared
 * "member" lock) and periodically tries to take buckets nobody owns: a replica that dies
 * loses its session and with it its locks, and the others take its buckets over.
 *
 * Delivery is at least once. A send that fails rolls the batch back (the rows stay
 * pending and are retried with back-off). A crash, or a lost database connection, after
 * the broker acknowledged a batch but before its transaction committed publishes that
 * batch again: consumers dedupe on the envelope's `eventId`. In the steady state (no
 * crash, no failed commit) every row is published exactly once.
 *
 * Latency. The relay sleeps between passes (`busyPollMs` after a pass that published,
 * `idlePollMs` otherwise) and `notify()` wakes it at once: writers call it after their
 * transaction committed. The rows may sit in a bucket another replica owns, so `notify()`
 * also sends a Postgres NOTIFY (throttled to one per `notifyThrottleMs`), which every
 * relay LISTENs for on its lock connection.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { APP_LOGGER } from '../common/logger.module.js';
import { silentLogger, type AppLogger } from '../common/logger.js';
import { describeError } from '../common/app-error.js';
import { Database, sqlOf, type Notification, type PoolClient } from '../database/database.js';
import {
  MESSAGE_PRODUCER,
  type MessageProducer,
  type OutboundMessage,
} from '../messaging/messaging.ports.js';
import {
  OUTBOX_BUCKETS,
  OutboxRepository,
  type PendingOutboxMessage,
} from './outbox.repository.js';
import { RELAY_LOCK_NAMESPACE, Wakeup, backoffDelay, sleep } from './outbox.relay-support.js';

export interface OutboxRelayOptions {
  /** Rows per batch (one producer.send, one transaction). Default 500. */
  readonly batchSize?: number;
  /** Pause after a pass that published something. Default 50 ms. */
  readonly busyPollMs?: number;
  /** Pause after a pass that found nothing (`notify()` cuts it short). Default 500 ms. */
  readonly idlePollMs?: number;
  /** How often bucket ownership is revisited (take free buckets, give back extra ones). Default 2 s. */
  readonly rebalanceIntervalMs?: number;
  /** Back-off of a bucket whose send failed: first and largest delay. Default 100 ms / 5 s. */
  readonly retryInitialMs?: number;
  readonly retryMaxMs?: number;
  /** Published rows older than this many days are deleted. Default 7. */
  readonly pruneAfterDays?: number;
  /** How often the prune runs. Default 1 h. */
  readonly pruneIntervalMs?: number;
  /** How often `metrics.pending` is sampled. Default 5 s. */
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

type BatchOutcome =
  | { readonly kind: 'published'; readonly count: number }
  | { readonly kind: 'empty' }
  | { readonly kind: 'busy' }
  | { readonly kind: 'failed'; readonly error: unknown };

type Settings = Required<OutboxRelayOptions>;

const DEFAULTS: Settings = {
  batchSize: 500,
  busyPollMs: 50,
  idlePollMs: 500,
  rebalanceIntervalMs: 2_000,
  retryInitialMs: 100,
  retryMaxMs: 5_000,
  pruneAfterDays: 7,
  pruneIntervalMs: 3_600_000,
  metricsIntervalMs: 5_000,
  flushTimeoutMs: 10_000,
  stopTimeoutMs: 15_000,
  notifyThrottleMs: 20,
};

/** The Postgres channel on which relays wake each other. */
export const OUTBOX_NOTIFY_CHANNEL = 'payflow_outbox_relay';

const ALL_BUCKETS: readonly number[] = Array.from({ length: OUTBOX_BUCKETS }, (_, b) => b);

@Injectable()
export class OutboxRelay implements OutboxFlusher {
  private readonly settings: Settings;
  private readonly metrics: OutboxRelayMetrics;
  private readonly logger: AppLogger;
  private readonly wakeup = new Wakeup();
  /** Where this replica starts looking for free buckets, so replicas spread out. */
  private readonly firstBucket = Math.floor(Math.random() * OUTBOX_BUCKETS);

  private running = false;
  private loopDone: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;
  private lockClient: PoolClient | null = null;
  private readonly owned = new Set<number>();
  private readonly failures = new Map<number, number>();
  private readonly retryAt = new Map<number, number>();
  private nextRebalanceAt = 0;
  private nextPruneAt = 0;
  private nextMetricsAt = 0;
  private maintenance: Promise<void> | null = null;
  private notifyTimer: NodeJS.Timeout | null = null;
  private notifyAgain = false;

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(MESSAGE_PRODUCER) private readonly producer: MessageProducer,
    @Inject(OutboxRepository) private readonly outbox: OutboxRepository,
    @Optional() @Inject(OUTBOX_RELAY_OPTIONS) options?: OutboxRelayOptions,
    @Optional() @Inject(OUTBOX_RELAY_METRICS) metrics?: OutboxRelayMetrics,
    @Optional() @Inject(APP_LOGGER) logger?: AppLogger,
  ) {
    this.settings = { ...DEFAULTS, ...definedOnly(options ?? {}) };
    this.metrics = metrics ?? {};
    this.logger = (logger ?? silentLogger()).child({ component: 'outbox-relay' });
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Buckets this replica owns right now (sorted). */
  ownedBuckets(): number[] {
    return [...this.owned].sort((a, b) => a - b);
  }

  /** Starts publishing in the background. Idempotent; resolves once buckets were claimed. */
  async start(): Promise<void> {
    if (this.stopping) await this.stopping;
    if (this.running) return;
    this.running = true;
    this.nextRebalanceAt = 0;
    this.nextPruneAt = Date.now() + Math.min(60_000, this.settings.pruneIntervalMs);
    this.nextMetricsAt = 0;
    const claimed = this.rebalanceSafely();
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
      await withTimeout(
        Promise.all([this.loopDone, this.maintenance]).then(() => undefined),
        this.settings.stopTimeoutMs,
      );
      await this.releaseLockConnection();
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
    if (!this.running) return;
    this.wakeup.wake();
    if (this.settings.notifyThrottleMs <= 0) return;
    if (this.notifyTimer) {
      this.notifyAgain = true;
      return;
    }
    this.sendNotify();
  }

  /** Leading-edge NOTIFY, and one trailing NOTIFY for calls during the throttle window. */
  private sendNotify(): void {
    this.database.sql
      .query('SELECT pg_notify($1, $2)', [OUTBOX_NOTIFY_CHANNEL, ''])
      .catch((error: unknown) => {
        this.logger.debug({ error: describeError(error) }, 'outbox NOTIFY failed');
      });
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      if (this.notifyAgain && this.running) {
        this.notifyAgain = false;
        this.sendNotify();
      }
    }, this.settings.notifyThrottleMs);
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
    const [head] = await sql.query<{ max: string | null }>(
      `SELECT max(id)::text AS max FROM outbox
        WHERE published_at IS NULL AND bucket = ANY($1::smallint[])`,
      [buckets],
    );
    const upTo = head?.max ?? null;
    if (upTo === null) return { drained: true, published: 0, remaining: 0 };

    let published = 0;
    let idleRounds = 0;
    for (;;) {
      const pending = await sql.query<{ bucket: number; count: number }>(
        `SELECT bucket, count(*)::int AS count FROM outbox
          WHERE published_at IS NULL AND id <= $1::bigint AND bucket = ANY($2::smallint[])
          GROUP BY bucket ORDER BY bucket`,
        [upTo, buckets],
      );
      const remaining = pending.reduce((sum, row) => sum + row.count, 0);
      const left = deadline - Date.now();
      if (remaining === 0) return { drained: true, published, remaining: 0 };
      if (left <= 0) return { drained: false, published, remaining };

      const round = this.publishBuckets(pending.map((row) => row.bucket)).catch(
        (error: unknown) => {
          const failed: BatchOutcome = { kind: 'failed', error };
          for (const row of pending) this.recordOutcome(row.bucket, failed);
          return new Map<number, BatchOutcome>(pending.map((row) => [row.bucket, failed]));
        },
      );
      // A send can hang for as long as the producer retries; the flush does not wait past
      // its deadline (the round finishes, or rolls back, in the background).
      const outcomes = await withTimeout(round, left);
      if (outcomes === undefined) continue;
      let progressed = false;
      for (const [bucket, outcome] of outcomes) {
        if (outcome.kind !== 'failed') this.recordOutcome(bucket, outcome);
        if (outcome.kind === 'published') {
          published += outcome.count;
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
  async pendingStats(): Promise<{ count: number; oldestAgeSeconds: number | null }> {
    const [row] = await this.database.sql.query<{ count: number; oldest: number | null }>(
      `SELECT count(*)::int AS count,
              extract(epoch FROM now() - min(created_at))::float8 AS oldest
         FROM outbox WHERE published_at IS NULL`,
    );
    return { count: row?.count ?? 0, oldestAgeSeconds: row?.oldest ?? null };
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        const now = Date.now();
        if (now >= this.nextRebalanceAt) await this.rebalanceSafely();
        this.startMaintenance(now);

        const pass = await this.publishOwned();
        if (!this.running) break;
        if (pass.more) {
          // Full batches: go on at once, but let other work of the process run first.
          await new Promise<void>((resolve) => setImmediate(resolve));
          continue;
        }
        await this.wakeup.wait(this.pauseAfter(pass.published));
      } catch (error) {
        // Every step catches its own failures; this only keeps an unforeseen one from
        // ending the loop.
        this.logger.error({ error: describeError(error) }, 'outbox relay pass failed');
        await this.wakeup.wait(this.settings.idlePollMs);
      }
    }
  }

  /** Idle or busy pause, cut short by the next due retry or rebalance. */
  private pauseAfter(published: number): number {
    const now = Date.now();
    let until = now + (published > 0 ? this.settings.busyPollMs : this.settings.idlePollMs);
    for (const bucket of this.owned) {
      const retryAt = this.retryAt.get(bucket);
      if (retryAt !== undefined && retryAt > now) until = Math.min(until, retryAt);
    }
    until = Math.min(until, Math.max(now, this.nextRebalanceAt));
    return until - now;
  }

  /**
   * One batch from every owned bucket that is not backing off, in one transaction: fence
   * the buckets, lock their oldest pending rows, send them all in one send, mark them
   * published, commit. When the send fails, every row stays pending and the buckets back
   * off. One transaction and one send a pass instead of one a bucket: a row waits for at
   * most one send round, not for a round per group of buckets.
   */
  private async publishOwned(): Promise<{ published: number; more: boolean }> {
    const now = Date.now();
    const due = this.ownedBuckets().filter((bucket) => (this.retryAt.get(bucket) ?? 0) <= now);
    if (due.length === 0) return { published: 0, more: false };
    let outcomes: Map<number, BatchOutcome>;
    try {
      outcomes = await this.publishBuckets(due);
    } catch (error) {
      // The transaction failed (a lost connection, a failed commit): every row stays pending.
      outcomes = new Map(due.map((bucket) => [bucket, { kind: 'failed', error }]));
      for (const [bucket, outcome] of outcomes) this.recordOutcome(bucket, outcome);
    }
    let published = 0;
    let more = false;
    for (const [bucket, outcome] of outcomes) {
      if (outcome.kind !== 'failed') this.recordOutcome(bucket, outcome);
      if (outcome.kind === 'published') {
        published += outcome.count;
        if (outcome.count >= this.settings.batchSize) more = true;
      }
    }
    return { published, more };
  }

  private publishBuckets(due: readonly number[]): Promise<Map<number, BatchOutcome>> {
    return this.database.transaction(async (tx) => {
      const outcomes = new Map<number, BatchOutcome>();
      const fenced = await tx.query<{ bucket: number }>(
        `SELECT b AS bucket FROM unnest($2::int[]) AS b
          WHERE pg_try_advisory_xact_lock($1::int, b)`,
        [RELAY_LOCK_NAMESPACE.BUCKET_FENCE, due],
      );
      const buckets = fenced.map((row) => row.bucket);
      for (const bucket of due) outcomes.set(bucket, { kind: 'busy' });
      if (buckets.length === 0) return outcomes;
      const byBucket = new Map<number, PendingOutboxMessage[]>();
      for (const bucket of buckets) byBucket.set(bucket, []);
      for (const row of await this.outbox.lockPending(tx, buckets, this.settings.batchSize)) {
        byBucket.get(row.bucket)?.push(row);
      }
      // One send for the whole pass: kafkajs makes one produce request per leader of each
      // send() and does not linger, so a send per bucket multiplied the requests by 16.
      // Nearly every bucket has rows on every broker, so a failure is the pass's anyway.
      const rows = [...byBucket.values()].flat();
      let failure: BatchOutcome | undefined;
      if (rows.length > 0) {
        try {
          await this.producer.send(rows.map(toOutboundMessage));
        } catch (error) {
          failure = { kind: 'failed', error };
        }
      }
      if (failure === undefined) {
        await this.outbox.markPublished(
          tx,
          rows.map((row) => row.id),
        );
      }
      for (const [bucket, bucketRows] of byBucket) {
        if (bucketRows.length === 0) {
          outcomes.set(bucket, { kind: 'empty' });
        } else if (failure !== undefined) {
          // Recorded now (the caller records the other outcomes after the commit).
          this.recordOutcome(bucket, failure);
          outcomes.set(bucket, failure);
        } else {
          outcomes.set(bucket, { kind: 'published', count: bucketRows.length });
        }
      }
      return outcomes;
    });
  }

  private recordOutcome(bucket: number, outcome: BatchOutcome): void {
    switch (outcome.kind) {
      case 'published':
        this.metrics.published?.(outcome.count, bucket);
        this.clearFailures(bucket);
        return;
      case 'empty':
        this.clearFailures(bucket);
        return;
      case 'busy':
        return;
      case 'failed': {
        const failures = (this.failures.get(bucket) ?? 0) + 1;
        this.failures.set(bucket, failures);
        const delay = backoffDelay(
          failures,
          this.settings.retryInitialMs,
          this.settings.retryMaxMs,
        );
        this.retryAt.set(bucket, Date.now() + delay);
        this.metrics.publishFailed?.(bucket, outcome.error);
        const fields = { bucket, failures, retryInMs: delay, error: describeError(outcome.error) };
        if (failures === 1 || failures % 20 === 0) {
          this.logger.warn(fields, 'outbox batch not published; the rows stay pending');
        } else {
          this.logger.debug(fields, 'outbox batch not published; the rows stay pending');
        }
        return;
      }
    }
  }

  private clearFailures(bucket: number): void {
    if (this.failures.delete(bucket)) {
      this.retryAt.delete(bucket);
      this.logger.info({ bucket }, 'outbox bucket publishes again');
    }
  }

  private async rebalanceSafely(): Promise<void> {
    this.nextRebalanceAt = Date.now() + this.settings.rebalanceIntervalMs;
    try {
      await this.rebalance();
    } catch (error) {
      this.logger.warn({ error: describeError(error) }, 'outbox bucket rebalance failed');
      this.dropLockConnection(error);
    }
    this.metrics.bucketsOwned?.(this.owned.size);
  }

  /** Gives back buckets above the fair share and claims free ones up to it. */
  private async rebalance(): Promise<void> {
    if (!this.running) return;
    const client = await this.lockConnection();
    const sql = sqlOf(client);
    // A lock taken on a connection that died meanwhile is no lock: count only live ones.
    const live = (): boolean => this.lockClient === client;
    const [row] = await sql.query<{ members: number }>(
      `SELECT count(*)::int AS members FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = $1::int::oid AND objid = 0`,
      [RELAY_LOCK_NAMESPACE.MEMBERS],
    );
    const fairShare = Math.ceil(OUTBOX_BUCKETS / Math.max(1, row?.members ?? 1));

    const excess = this.ownedBuckets().slice(fairShare);
    for (const bucket of excess) {
      await sql.query('SELECT pg_advisory_unlock($1::int, $2::int)', [
        RELAY_LOCK_NAMESPACE.BUCKET_OWNER,
        bucket,
      ]);
      this.owned.delete(bucket);
      this.failures.delete(bucket);
      this.retryAt.delete(bucket);
    }
    if (this.owned.size >= fairShare) return;

    const held = await sql.query<{ bucket: number }>(
      `SELECT objid::int AS bucket FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = $1::int::oid`,
      [RELAY_LOCK_NAMESPACE.BUCKET_OWNER],
    );
    const taken = new Set(held.map((lock) => lock.bucket));
    for (let i = 0; i < OUTBOX_BUCKETS && this.owned.size < fairShare; i++) {
      const bucket = (this.firstBucket + i) % OUTBOX_BUCKETS;
      if (taken.has(bucket) || this.owned.has(bucket)) continue;
      const [lock] = await sql.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock($1::int, $2::int) AS ok',
        [RELAY_LOCK_NAMESPACE.BUCKET_OWNER, bucket],
      );
      if (lock?.ok === true && live()) this.owned.add(bucket);
    }
  }

  /** The dedicated connection that holds this replica's session locks and LISTENs. */
  private async lockConnection(): Promise<PoolClient> {
    if (this.lockClient) return this.lockClient;
    const client = await this.database.pool.connect();
    client.on('notification', (message: Notification) => {
      if (message.channel === OUTBOX_NOTIFY_CHANNEL && this.running) this.wakeup.wake();
    });
    client.on('error', (error: Error) => {
      if (this.lockClient !== client) return;
      this.logger.warn(
        { error: describeError(error), buckets: this.owned.size },
        'outbox relay lost its lock connection; its buckets are free for other replicas',
      );
      this.dropLockConnection(error);
    });
    try {
      await client.query('SELECT pg_advisory_lock_shared($1::int, 0)', [
        RELAY_LOCK_NAMESPACE.MEMBERS,
      ]);
      await client.query(`LISTEN ${OUTBOX_NOTIFY_CHANNEL}`);
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
    this.lockClient = client;
    return client;
  }

  /** Forgets the lock connection (destroying it, so that Postgres frees its locks). */
  private dropLockConnection(error: unknown): void {
    const client = this.lockClient;
    this.lockClient = null;
    this.owned.clear();
    if (client) client.release(error instanceof Error ? error : true);
  }

  private async releaseLockConnection(): Promise<void> {
    const client = this.lockClient;
    this.lockClient = null;
    this.owned.clear();
    this.metrics.bucketsOwned?.(0);
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    this.notifyTimer = null;
    this.notifyAgain = false;
    if (!client) return;
    client.removeAllListeners('notification');
    try {
      await client.query('UNLISTEN *');
      await client.query('SELECT pg_advisory_unlock_all()');
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
    }
  }

  /** Prune and metrics sampling run beside the publishing loop, one at a time. */
  private startMaintenance(now: number): void {
    if (this.maintenance) return;
    const prune = now >= this.nextPruneAt;
    const sample = this.metrics.pending !== undefined && now >= this.nextMetricsAt;
    if (!prune && !sample) return;
    if (prune) this.nextPruneAt = now + this.settings.pruneIntervalMs;
    if (sample) this.nextMetricsAt = now + this.settings.metricsIntervalMs;
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

function toOutboundMessage(row: PendingOutboxMessage): OutboundMessage {
  return { topic: row.topic, key: row.key, value: row.value, headers: row.headers };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, entry]) => entry !== undefined),
  ) as Partial<T>;
}

/** `promise`'s value, or undefined when it takes longer than `ms` (the timer is cleared). */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
