/**
 * Delivery of one topic's messages with key-level concurrency, bounded memory and manual,
 * batched commits:
 *
 * - Fetched messages are enqueued per partition and key (KeyScheduler); different keys run
 *   in parallel, one key strictly in order; a keyless message is a partition barrier.
 * - At most `maxInFlight` messages and `maxInFlightBytes` bytes are held (queued + running,
 *   incl. back-off waits); a message larger than the byte bound is still taken when nothing
 *   else is held, so it cannot wait forever. When full, onBatch waits for room (heartbeating, so the member stays in the group) and the
 *   client fetches nothing meanwhile. (Pausing every partition instead would make kafkajs
 *   sleep a whole fetch wait before it looks again, which caps the throughput.) Fetching
 *   is paused only when draining.
 * - A message's offset counts as done once the processor says it took effect or reached the
 *   dead-letter sink. Per partition the commit watermark is the first offset not done
 *   (PartitionOffsetTracker); watermarks are committed every `commitIntervalMs`, sooner
 *   after `commitEveryCompletions` completions, one commit request at a time.
 * - Rebalance: kept partitions are fetched again from the committed offset by the client,
 *   so offsets already held are skipped; revoked partitions lose their queued work and their
 *   tracker (running work finishes, its completion is not committed by this member).
 * - The client's fetch loop never waits for a handler (onBatch only enqueues, or waits for
 *   room while heartbeating), so heartbeats go on during slow handlers.
 *
 * The memory bound is InFlightBudget's, the commits are OffsetCommitter's; this file
 * decides what runs when.
 */
import { describeError } from '../../errors/app-error.js';
import type { AppLogger } from '../../logging/logger.js';
import { withTimeout } from '../../timing/sleep.js';
import type {
  BatchControl,
  ConsumedBatch,
  PartitionConsumer,
  TopicPartition,
  TopicPartitionOffset,
} from './consumer.port.js';
import { InFlightBudget, messageBytes } from './in-flight-budget.js';
import { KafkaAuthorizationError } from '../security/kafka-authorization.js';
import { KeyScheduler, type Ticket } from './key-scheduler.js';
import type { InboundMessage } from '../messaging.ports.js';
import { OffsetCommitter, tpKey } from './offset-committer.js';
import type { PartitionOffsetTracker } from './offset-tracker.js';
import type { InboundEventsMetrics, ProcessOutcome } from './transport.metrics.js';

/**
 * What runs one after the other inside a partition: `key` (the default) runs different
 * Kafka keys in parallel and one key in order; `partition` runs one message of the
 * partition at a time, whatever its key (the safe-but-slow mode: at most one event per
 * partition in flight, so throughput is about partitions / handler latency).
 */
export type OrderSequencing = 'key' | 'partition';

/** The one lane of a partition in `partition` sequencing. */
const PARTITION_LANE = '';

export interface DeliveryEngineOptions {
  readonly consumer: PartitionConsumer;
  readonly topic: string;
  readonly process: (message: InboundMessage, signal: AbortSignal) => Promise<ProcessOutcome>;
  readonly maxInFlight: number;
  /**
   * Bytes (key + value + headers) held at once, beside `maxInFlight`. Default: no bound
   * beyond the message count.
   */
  readonly maxInFlightBytes?: number;
  /** Default `key`. */
  readonly sequencing?: OrderSequencing;
  readonly commitIntervalMs: number;
  readonly commitEveryCompletions: number;
  readonly fromBeginning: boolean;
  readonly logger: AppLogger;
  readonly metrics: InboundEventsMetrics;
  /** Called when the client crashed for good (no restart). */
  readonly onFatal?: (error: Error) => void;
  readonly onAssignment?: (assignment: readonly TopicPartition[]) => void;
}

export interface StopOptions {
  /** How long running handlers may take to finish. */
  readonly drainTimeoutMs: number;
  /**
   * Bound of the final commit, and again of leaving the group: a stop takes at most
   * drainTimeoutMs + 2 x commitTimeoutMs.
   */
  readonly commitTimeoutMs: number;
}

export interface StopReport {
  /** Handlers still running when the drain time ran out. */
  readonly unfinished: number;
  /** Queued messages given up (they will be delivered again). */
  readonly abandoned: number;
  readonly committed: readonly TopicPartitionOffset[];
}

export interface EngineStats {
  readonly assigned: readonly TopicPartition[];
  readonly queued: number;
  readonly running: number;
  readonly held: number;
  /** Bytes of the messages held now. */
  readonly heldBytes: number;
  /** Most bytes held at any moment since the start. */
  readonly peakHeldBytes: number;
  /** Times a batch had to wait for room (an in-flight limit was reached). */
  readonly waitsForRoom: number;
  readonly commits: number;
  readonly duplicatesSkipped: number;
}

interface Work {
  readonly message: InboundMessage;
  readonly offset: bigint;
  /** What it counts against maxInFlightBytes. */
  readonly bytes: number;
  readonly partitionKey: string;
  /** The tracker of the assignment it was fetched in; replaced when the partition is revoked. */
  readonly tracker: PartitionOffsetTracker;
  ticket?: Ticket<Work>;
}

export { messageBytes } from './in-flight-budget.js';

export class DeliveryEngine {
  private readonly scheduler = new KeyScheduler<Work>();
  private lastProgressAt: number | undefined;
  private assigned = new Map<string, TopicPartition>();
  private readonly budget: InFlightBudget;
  private readonly committer: OffsetCommitter;
  private draining = false;
  private readonly abort = new AbortController();
  private idleWaiters: (() => void)[] = [];
  private counters = { waitsForRoom: 0, duplicatesSkipped: 0 };

  constructor(private readonly options: DeliveryEngineOptions) {
    this.budget = new InFlightBudget(options.maxInFlight, options.maxInFlightBytes);
    this.committer = new OffsetCommitter({
      consumer: options.consumer,
      commitIntervalMs: options.commitIntervalMs,
      commitEveryCompletions: options.commitEveryCompletions,
      logger: options.logger,
      metrics: options.metrics,
      assigned: () => this.assigned,
      draining: () => this.draining,
    });
  }

  /** Subscribes and joins the group; resolves once the first assignment arrived. */
  async start(): Promise<void> {
    const { consumer, topic } = this.options;
    this.progressed();
    await consumer.connect();
    await consumer.subscribe(topic, { fromBeginning: this.options.fromBeginning });
    await consumer.run({
      onBatch: (batch, control) => this.onBatch(batch, control),
      onAssignment: (assignment) => this.onAssignment(assignment),
      onRebalancing: () => this.committer.commitSoon(),
      onCrash: (error, restarting) => this.onCrash(error, restarting),
      onProgress: () => this.progressed(),
    });
    this.committer.start();
  }

  /**
   * Milliseconds since the consumer last showed it is alive: a fetch came back (empty ones
   * too), a heartbeat was sent, the group was joined, a batch arrived, or a batch waiting
   * for room (back-pressure: the handlers hold the limit) heartbeated. 0 before start().
   */
  progressAgeMs(now = Date.now()): number {
    return this.lastProgressAt === undefined ? 0 : Math.max(0, now - this.lastProgressAt);
  }

  private progressed(): void {
    this.lastProgressAt = Date.now();
  }

  stats(): EngineStats {
    return {
      assigned: [...this.assigned.values()],
      queued: this.scheduler.queued,
      running: this.scheduler.running,
      held: this.budget.held,
      heldBytes: this.budget.heldBytes,
      peakHeldBytes: this.budget.peakHeldBytes,
      waitsForRoom: this.counters.waitsForRoom,
      commits: this.committer.commits,
      duplicatesSkipped: this.counters.duplicatesSkipped,
    };
  }

  /**
   * Graceful stop: no more fetching, queued work is dropped (redelivered later), back-off
   * waits end, running handlers get `drainTimeoutMs` to finish; then the watermarks are
   * committed and the member leaves the group.
   */
  async stop(options: StopOptions): Promise<StopReport> {
    const log = this.options.logger;
    this.draining = true;
    this.abort.abort();
    this.pauseAll();
    this.budget.wakeWaiters();
    const abandoned = this.release(this.scheduler.dropAllQueued());
    this.reportGauges();
    log.info(
      { running: this.scheduler.running, abandoned },
      'order events: stopping, waiting for running handlers',
    );
    const finished = await this.waitIdle(options.drainTimeoutMs);
    const unfinished = finished ? 0 : this.scheduler.running;
    if (!finished) {
      log.warn(
        { unfinished, drainTimeoutMs: options.drainTimeoutMs },
        'order events: handlers still running at the end of the drain time; their offsets stay uncommitted',
      );
    }
    const committed = await this.committer.commitFinal(options.commitTimeoutMs);
    try {
      await withTimeout(this.options.consumer.disconnect(), options.commitTimeoutMs);
    } catch (error) {
      log.warn({ error: describeError(error) }, 'order events: disconnect failed');
    }
    return { unfinished, abandoned, committed };
  }

  // ------------------------------------------------------------------ fetching

  private async onBatch(batch: ConsumedBatch, control: BatchControl): Promise<void> {
    this.progressed();
    let heartbeatFailed = false;
    const guarded: BatchControl = {
      resolveOffset: (offset) => control.resolveOffset(offset),
      heartbeat: async () => {
        try {
          await control.heartbeat();
        } catch (error) {
          heartbeatFailed = true;
          throw error;
        }
      },
    };
    try {
      await this.acceptBatch(batch, guarded);
    } catch (error) {
      // The client's own errors (rebalance) go back to it; ours never: unresolved
      // messages are simply fetched again.
      if (heartbeatFailed) throw error;
      this.options.logger.error(
        { topic: batch.topic, partition: batch.partition, error: describeError(error) },
        'order events: failed to accept a batch',
      );
    }
  }

  private async acceptBatch(batch: ConsumedBatch, control: BatchControl): Promise<void> {
    const key = tpKey(batch.topic, batch.partition);
    if (this.draining || !this.assigned.has(key)) return;
    this.committer.sawHighWatermark(key, BigInt(batch.highWatermark));
    const tracker = this.committer.trackerFor(key);
    for (const message of batch.messages) {
      const offset = BigInt(message.offset);
      if (!tracker.isNew(offset)) {
        // Fetched again after a rebalance: already queued, running or done here.
        this.counters.duplicatesSkipped++;
        control.resolveOffset(message.offset);
        continue;
      }
      const bytes = messageBytes(message);
      if (!this.budget.hasRoomFor(bytes)) {
        // Rejects only when the heartbeat does (rebalance): the client handles that.
        if (!(await this.waitForRoom(key, bytes, control))) return;
        // Revoked and assigned again while waiting: the client fetches it anew.
        if (this.committer.trackerOf(key) !== tracker) return;
      }
      tracker.add(offset);
      this.budget.take(bytes);
      const work: Work = { message, offset, bytes, partitionKey: key, tracker };
      const lane = this.laneOf(message);
      const { ticket, start } = this.scheduler.enqueue(key, lane, work);
      work.ticket = ticket;
      control.resolveOffset(message.offset);
      for (const next of start) this.run(next);
    }
    this.reportGauges();
  }

  /** The scheduler lane: the Kafka key (null: a barrier), or the partition's single lane. */
  private laneOf(message: InboundMessage): string | null {
    if (this.options.sequencing === 'partition') return PARTITION_LANE;
    return message.key === null ? null : message.key.toString('latin1');
  }

  /** Forgets dropped queued work (it is fetched again later); returns how many. */
  private release(dropped: readonly Work[]): number {
    for (const work of dropped) this.budget.give(work.bytes);
    return dropped.length;
  }

  /**
   * Waits until a message of `bytes` fits, heartbeating meanwhile. False when the batch
   * should be left (draining, or its partition was revoked).
   */
  private async waitForRoom(key: string, bytes: number, control: BatchControl): Promise<boolean> {
    this.counters.waitsForRoom++;
    this.options.metrics.fetchPaused();
    this.options.logger.debug(
      { held: this.budget.held, heldBytes: this.budget.heldBytes, bytes },
      'order events: in-flight limit reached',
    );
    this.reportGauges();
    return this.budget.waitForRoom(
      bytes,
      () => this.draining || !this.assigned.has(key),
      async () => {
        await control.heartbeat();
        this.progressed();
      },
    );
  }

  private pauseAll(): void {
    this.safely('pause', () => this.options.consumer.pause([...this.assigned.values()]));
  }

  // ------------------------------------------------------------------ processing

  private run(work: Work): void {
    this.reportGauges();
    void this.execute(work);
  }

  private async execute(work: Work): Promise<void> {
    let outcome: ProcessOutcome;
    try {
      outcome = await this.options.process(work.message, this.abort.signal);
    } catch (error) {
      // The processor never rejects; if it does, keep the offset uncommitted.
      this.options.logger.error(
        {
          partition: work.message.partition,
          offset: work.message.offset,
          error: describeError(error),
        },
        'order events: processing failed unexpectedly',
      );
      outcome = 'abandoned';
    }
    this.finish(work, outcome);
  }

  private finish(work: Work, outcome: ProcessOutcome): void {
    this.options.metrics.processed(outcome);
    if (outcome !== 'abandoned') this.committer.completed(work.tracker, work.offset);
    this.budget.give(work.bytes);
    let start: Work[] = [];
    if (work.ticket !== undefined) {
      try {
        start = this.scheduler.complete(work.ticket);
      } catch (error) {
        this.options.logger.error({ error: describeError(error) }, 'order events: scheduler bug');
      }
    }
    for (const next of start) this.run(next);
    this.reportGauges();
    this.committer.commitIfDue();
    // A waiting batch checks for itself whether its next message fits now.
    this.budget.wakeWaiters();
    if (this.scheduler.running === 0) {
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  private waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.scheduler.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  // ------------------------------------------------------------------ group membership

  private onAssignment(assignment: readonly TopicPartition[]): void {
    this.progressed();
    const next = new Map(assignment.map((tp) => [tpKey(tp.topic, tp.partition), tp]));
    const revoked: TopicPartition[] = [];
    let dropped = 0;
    for (const [key, tp] of this.assigned) {
      if (next.has(key)) continue;
      revoked.push(tp);
      dropped += this.release(this.scheduler.dropQueued(key));
      this.committer.forget(key);
    }
    const added = [...next].filter(([key]) => !this.assigned.has(key)).map(([, tp]) => tp);
    this.assigned = next;
    this.committer.startOver();
    this.options.logger.info(
      {
        topic: this.options.topic,
        assigned: partitionsOf(assignment),
        added: partitionsOf(added),
        revoked: partitionsOf(revoked),
        droppedQueued: dropped,
      },
      'order events: partition assignment changed',
    );
    this.options.onAssignment?.(assignment);
    if (this.draining) this.pauseAll();
    this.reportGauges();
    this.budget.wakeWaiters();
  }

  private onCrash(error: Error, restarting: boolean): void {
    if (restarting) {
      // A denial (an ACL withdrawn) is warned about once by KafkaAuthorizationStatus, not
      // at each restart.
      const level = error instanceof KafkaAuthorizationError ? 'debug' : 'warn';
      this.options.logger[level](
        { error: describeError(error) },
        'order events: Kafka consumer crashed and restarts',
      );
      return;
    }
    this.options.logger.error(
      { error: describeError(error) },
      'order events: Kafka consumer crashed and stopped',
    );
    this.options.onFatal?.(error);
  }

  private reportGauges(): void {
    this.options.metrics.queued(this.scheduler.queued);
    this.options.metrics.inFlight(this.scheduler.running);
    this.options.metrics.heldBytes(this.budget.heldBytes);
  }

  private safely(what: string, action: () => void): void {
    try {
      action();
    } catch (error) {
      this.options.logger.warn({ error: describeError(error) }, `order events: ${what} failed`);
    }
  }
}

function partitionsOf(tps: readonly TopicPartition[]): number[] {
  return tps.map((tp) => tp.partition).sort((a, b) => a - b);
}
