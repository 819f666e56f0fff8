/**
 * The outbox relay's loop: publishes the rows that state changes wrote into `outbox` (in the
 * same transaction as the change) through the `MessageProducer`, then marks them published.
 * This file holds when it works: start and stop, the loop's passes and sleeps, rebalancing
 * and the maintenance beside it. Passes are pipelined (issue 30 §3): the loop starts one
 * whenever rows are announced while fewer than `pipelineDepth` (3) are in flight; it claims
 * its rows as soon as the send before it is over, so a row committed while a pass waits
 * for Kafka no longer waits for that pass's mark and commit and the next one's start.
 * Its parts: RelayPublisher (what a pass publishes, and flush; ordering, delivery and
 * lanes are explained there), BucketOwnership (which buckets this replica publishes),
 * RelayWakeup (the signal that cuts its sleep short), RelaySchedule (when the periodic
 * work is due), BucketBackoff (a failing bucket waits, the others go on); the SQL is
 * OutboxRepository's and RelayLockRepository's.
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
import { withinOrUndefined } from '../timing/sleep.js';
import { Database, type ListenHandle } from '../database/database.js';
import { MESSAGE_PRODUCER, type MessageProducer } from '../messaging/messaging.ports.js';
import { BucketBackoff } from './bucket-backoff.js';
import { BucketOwnership } from './bucket-ownership.js';
import { OutboxRepository } from './outbox.repository.js';
import {
  RELAY_SIGNAL,
  RelayLockRepository,
  OUTBOX_NOTIFY_CHANNEL,
} from './relay-locks.repository.js';
import { RelayPublisher, type PassResult } from './relay-publisher.js';
import { RelaySchedule } from './relay-schedule.js';
import { RelayWakeup } from './relay-wakeup.js';
import {
  OUTBOX_RELAY_METRICS,
  OUTBOX_RELAY_OPTIONS,
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
  private readonly publisher: RelayPublisher;

  private running = false;
  private loopDone: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;
  private readonly schedule: RelaySchedule;
  private nextPruneAt = 0;
  private maintenance: Promise<void> | null = null;
  private listenHandle: ListenHandle | null = null;
  /** When a rebalance that failed (Postgres away) is tried again; undefined: none failed. */
  private rebalanceRetryAt: number | undefined;
  /** Rows published by the pass that ended last (what the pause after it depends on). */
  private lastPublished = 0;
  /** A pass left rows for one still in flight: look again when another pass ends. */
  private blockedWaiting = false;

  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(MESSAGE_PRODUCER) producer: MessageProducer,
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
    this.publisher = new RelayPublisher({
      database,
      producer,
      outbox,
      locks: this.locks,
      backoff: this.backoff,
      settings: this.settings,
    });
    this.ownership = new BucketOwnership({
      pool: database.pool,
      locks: this.locks,
      isRunning,
      onDisowned: (bucket) => {
        this.backoff.forget(bucket);
        this.publisher.forget(bucket);
      },
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
  flush(
    timeoutMs: number = this.settings.flushTimeoutMs,
    options: OutboxFlushOptions = {},
  ): Promise<OutboxFlushResult> {
    return this.publisher.flush(timeoutMs, options);
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

  /**
   * Starts passes and sleeps. A pass starts when rows are announced (or the pause ran
   * out) while fewer than `pipelineDepth` are in flight, without waiting for the others:
   * pipelining (RelayPublisher keeps each key's rows in one pass at a time).
   */
  private async loop(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    let startPass = true;
    try {
      while (this.running) {
        try {
          this.startMaintenance(Date.now());
          if (startPass && inFlight.size < this.settings.pipelineDepth) {
            startPass = false;
            this.startPass(inFlight);
          }
          if (this.rebalanceRetryAt !== undefined && Date.now() >= this.rebalanceRetryAt) {
            this.schedule.askRebalance();
          }
          if (this.schedule.takeRebalance()) {
            const changed = await this.rebalance();
            if (changed.given > 0) await this.wakeup.announce(RELAY_SIGNAL.MEMBERS);
            if (changed.gained > 0) {
              startPass = true;
              continue;
            }
          }
          if (inFlight.size >= this.settings.pipelineDepth) {
            // All passes in flight: the next starts when one ends (a wake-up is kept).
            await Promise.race(inFlight);
            continue;
          }
          const retryAt = earliest(
            this.backoff.nextRetryAt(this.ownership.buckets(), Date.now()),
            this.rebalanceRetryAt,
          );
          await this.wakeup.wait(this.schedule.pauseAfter(this.lastPublished, retryAt));
          startPass = true;
        } catch (error) {
          // Every step catches its own failures; this only keeps an unforeseen one from
          // ending the loop.
          this.logger.error({ error: describeError(error) }, 'outbox relay pass failed');
          await this.wakeup.wait(this.schedule.idlePause());
          startPass = true;
        }
      }
    } finally {
      await Promise.allSettled(inFlight);
    }
  }

  /** One pass in the background; when it ends, whether to start another at once. */
  private startPass(inFlight: Set<Promise<void>>): void {
    const pass: Promise<void> = this.publisher
      .publishOwned(this.ownership.buckets(), this.ownership.lockPid())
      .then(
        (result) => {
          inFlight.delete(pass);
          this.passEnded(result, inFlight.size);
        },
        (error: unknown) => {
          inFlight.delete(pass);
          this.logger.error({ error: describeError(error) }, 'outbox relay pass failed');
        },
      );
    inFlight.add(pass);
  }

  private passEnded(result: PassResult, othersInFlight: number): void {
    this.lastPublished = result.published;
    if (result.rows > 0) this.schedule.active();
    // Rows left because another pass held their key go out after that pass ends.
    const waitForOthers = result.blocked && othersInFlight > 0;
    const again =
      result.more || result.failed || (result.blocked && !waitForOthers) || this.blockedWaiting;
    this.blockedWaiting = waitForOthers;
    // Full batches, a bucket now backing off (its retry time), or rows left: look again.
    if (again) this.wakeup.wake();
  }

  private async rebalance(): Promise<{ gained: number; given: number }> {
    const changed = await this.ownership.rebalance();
    this.metrics.bucketsOwned?.(this.ownership.size);
    // Postgres away (restarting): the buckets are claimed as soon as it answers again,
    // not at the next scheduled rebalance.
    this.rebalanceRetryAt = changed.failed ? Date.now() + REBALANCE_RETRY_MS : undefined;
    return changed;
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
