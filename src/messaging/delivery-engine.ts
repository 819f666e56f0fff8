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
 */
import type { AppLogger } from '../common/logger.js';
import type {
  BatchControl,
  ConsumedBatch,
  PartitionConsumer,
  TopicPartition,
  TopicPartitionOffset,
} from './consumer.port.js';
import { describeFailure } from './failure-policy.js';
import { KeyScheduler, type Ticket } from './key-scheduler.js';
import type { InboundMessage } from './messaging.ports.js';
import { PartitionOffsetTracker } from './offset-tracker.js';
import type { OrderEventsMetrics, ProcessOutcome } from './transport.metrics.js';

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
  readonly metrics: OrderEventsMetrics;
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

const tpKey = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** While a batch waits for room, heartbeat this often (kafkajs rate-limits it further). */
const HEARTBEAT_WHILE_WAITING_MS = 500;

export class DeliveryEngine {
  private readonly scheduler = new KeyScheduler<Work>();
  private lastProgressAt: number | undefined;
  private readonly trackers = new Map<string, PartitionOffsetTracker>();
  private readonly highWatermarks = new Map<string, bigint>();
  private assigned = new Map<string, TopicPartition>();
  private held = 0;
  private heldBytes = 0;
  private peakHeldBytes = 0;
  private readonly maxInFlightBytes: number;
  private draining = false;
  private roomWaiters: (() => void)[] = [];
  private readonly abort = new AbortController();
  private commitTimer: NodeJS.Timeout | undefined;
  private committing: Promise<void> | undefined;
  private commitAgain = false;
  private completionsSinceCommit = 0;
  private failedCommits = 0;
  private idleWaiters: (() => void)[] = [];
  private counters = { waitsForRoom: 0, commits: 0, duplicatesSkipped: 0 };

  constructor(private readonly options: DeliveryEngineOptions) {
    if (!Number.isInteger(options.maxInFlight) || options.maxInFlight < 1) {
      throw new Error(`maxInFlight must be a positive integer, got ${options.maxInFlight}`);
    }
    this.maxInFlightBytes = options.maxInFlightBytes ?? Number.POSITIVE_INFINITY;
    if (!(this.maxInFlightBytes > 0)) {
      throw new Error(`maxInFlightBytes must be positive, got ${options.maxInFlightBytes}`);
    }
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
      onRebalancing: () => this.commitSoon(),
      onCrash: (error, restarting) => this.onCrash(error, restarting),
      onProgress: () => this.progressed(),
    });
    this.commitTimer = setInterval(() => this.commitSoon(), this.options.commitIntervalMs);
    this.commitTimer.unref();
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
      held: this.held,
      heldBytes: this.heldBytes,
      peakHeldBytes: this.peakHeldBytes,
      ...this.counters,
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
    this.wakeRoomWaiters();
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
    if (this.commitTimer !== undefined) clearInterval(this.commitTimer);
    let committed: readonly TopicPartitionOffset[] = [];
    const commitDeadline = Date.now() + options.commitTimeoutMs;
    try {
      await withTimeout(this.committing ?? Promise.resolve(), options.commitTimeoutMs);
    } catch {
      // A commit stuck in the client's retries: the final commit below supersedes it.
    }
    const offsets = this.commitCandidates(true);
    if (offsets.length > 0) {
      try {
        const left = Math.max(100, commitDeadline - Date.now());
        await withTimeout(this.options.consumer.commit(offsets), left);
        committed = offsets;
      } catch (error) {
        log.warn({ error: describeFailure(error) }, 'order events: final commit failed');
      }
    }
    try {
      await withTimeout(this.options.consumer.disconnect(), options.commitTimeoutMs);
    } catch (error) {
      log.warn({ error: describeFailure(error) }, 'order events: disconnect failed');
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
        { topic: batch.topic, partition: batch.partition, error: describeFailure(error) },
        'order events: failed to accept a batch',
      );
    }
  }

  private async acceptBatch(batch: ConsumedBatch, control: BatchControl): Promise<void> {
    const key = tpKey(batch.topic, batch.partition);
    if (this.draining || !this.assigned.has(key)) return;
    this.highWatermarks.set(key, BigInt(batch.highWatermark));
    let tracker = this.trackers.get(key);
    if (tracker === undefined) {
      tracker = new PartitionOffsetTracker();
      this.trackers.set(key, tracker);
    }
    for (const message of batch.messages) {
      const offset = BigInt(message.offset);
      if (!tracker.isNew(offset)) {
        // Fetched again after a rebalance: already queued, running or done here.
        this.counters.duplicatesSkipped++;
        control.resolveOffset(message.offset);
        continue;
      }
      const bytes = messageBytes(message);
      if (!this.hasRoomFor(bytes)) {
        // Rejects only when the heartbeat does (rebalance): the client handles that.
        if (!(await this.waitForRoom(key, bytes, control))) return;
        // Revoked and assigned again while waiting: the client fetches it anew.
        if (this.trackers.get(key) !== tracker) return;
      }
      tracker.add(offset);
      this.held++;
      this.heldBytes += bytes;
      if (this.heldBytes > this.peakHeldBytes) this.peakHeldBytes = this.heldBytes;
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

  /**
   * Whether a message of `bytes` may be held now: below both bounds, or nothing held at all
   * (a message larger than maxInFlightBytes alone is taken, or it would wait forever).
   */
  private hasRoomFor(bytes: number): boolean {
    if (this.held === 0) return true;
    return this.held < this.options.maxInFlight && this.heldBytes + bytes <= this.maxInFlightBytes;
  }

  /** Forgets dropped queued work (it is fetched again later); returns how many. */
  private release(dropped: readonly Work[]): number {
    for (const work of dropped) {
      this.held--;
      this.heldBytes -= work.bytes;
    }
    return dropped.length;
  }

  /**
   * Waits until a message of `bytes` fits (hasRoomFor), heartbeating meanwhile. False when
   * the batch should be left (draining, or its partition was revoked).
   */
  private async waitForRoom(key: string, bytes: number, control: BatchControl): Promise<boolean> {
    this.counters.waitsForRoom++;
    this.options.metrics.fetchPaused();
    this.options.logger.debug(
      { held: this.held, heldBytes: this.heldBytes, bytes },
      'order events: in-flight limit reached',
    );
    this.reportGauges();
    while (!this.hasRoomFor(bytes)) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, HEARTBEAT_WHILE_WAITING_MS);
        this.roomWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (this.draining || !this.assigned.has(key)) return false;
      await control.heartbeat();
      this.progressed();
    }
    return true;
  }

  private wakeRoomWaiters(): void {
    for (const wake of this.roomWaiters.splice(0)) wake();
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
          error: describeFailure(error),
        },
        'order events: processing failed unexpectedly',
      );
      outcome = 'abandoned';
    }
    this.finish(work, outcome);
  }

  private finish(work: Work, outcome: ProcessOutcome): void {
    this.options.metrics.processed(outcome);
    if (outcome !== 'abandoned') {
      // A stale tracker (partition revoked meanwhile) is no longer committed from.
      if (work.tracker.complete(work.offset)) this.completionsSinceCommit++;
    }
    this.held--;
    this.heldBytes -= work.bytes;
    let start: Work[] = [];
    if (work.ticket !== undefined) {
      try {
        start = this.scheduler.complete(work.ticket);
      } catch (error) {
        this.options.logger.error({ error: describeFailure(error) }, 'order events: scheduler bug');
      }
    }
    for (const next of start) this.run(next);
    this.reportGauges();
    if (this.completionsSinceCommit >= this.options.commitEveryCompletions) this.commitSoon();
    // A waiting batch checks for itself whether its next message fits now.
    if (this.roomWaiters.length > 0) this.wakeRoomWaiters();
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
      this.trackers.delete(key);
      this.highWatermarks.delete(key);
    }
    const added = [...next].filter(([key]) => !this.assigned.has(key)).map(([, tp]) => tp);
    this.assigned = next;
    // The client starts over from the committed offsets: commit again what is done.
    for (const tracker of this.trackers.values()) tracker.committed = undefined;
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
    this.wakeRoomWaiters();
  }

  private onCrash(error: Error, restarting: boolean): void {
    if (restarting) {
      this.options.logger.warn(
        { error: describeFailure(error) },
        'order events: Kafka consumer crashed and restarts',
      );
      return;
    }
    this.options.logger.error(
      { error: describeFailure(error) },
      'order events: Kafka consumer crashed and stopped',
    );
    this.options.onFatal?.(error);
  }

  // ------------------------------------------------------------------ commits

  private commitSoon(): void {
    if (this.committing !== undefined) {
      this.commitAgain = true;
      return;
    }
    this.committing = this.commitLoop().finally(() => {
      this.committing = undefined;
    });
  }

  private async commitLoop(): Promise<void> {
    do {
      this.commitAgain = false;
      const offsets = this.commitCandidates(false);
      this.completionsSinceCommit = 0;
      this.reportLag();
      if (offsets.length === 0) continue;
      const trackers = offsets.map((o) => this.trackers.get(tpKey(o.topic, o.partition)));
      const started = Date.now();
      try {
        await this.options.consumer.commit(offsets);
        this.counters.commits++;
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
        this.failedCommits++;
        const level = this.failedCommits === 1 || this.failedCommits % 100 === 0 ? 'warn' : 'debug';
        this.options.logger[level](
          {
            error: describeFailure(error),
            partitions: offsets.length,
            failedInARow: this.failedCommits,
          },
          'order events: commit failed; retrying with the next commit',
        );
        return;
      }
      this.failedCommits = 0;
    } while (this.commitAgain && !this.draining);
  }

  /** Watermarks of assigned partitions that moved past their last commit (or all: `force`). */
  private commitCandidates(force: boolean): TopicPartitionOffset[] {
    const offsets: TopicPartitionOffset[] = [];
    for (const [key, tp] of this.assigned) {
      const tracker = this.trackers.get(key);
      if (tracker === undefined) continue;
      const offset = force ? tracker.watermark() : tracker.commitCandidate();
      if (offset !== undefined) offsets.push({ ...tp, offset: offset.toString() });
    }
    return offsets;
  }

  private reportLag(): void {
    for (const [key, tp] of this.assigned) {
      const high = this.highWatermarks.get(key);
      const watermark = this.trackers.get(key)?.watermark();
      if (high === undefined || watermark === undefined) continue;
      const lag = high > watermark ? high - watermark : 0n;
      this.options.metrics.partitionLag(tp.topic, tp.partition, Number(lag));
    }
  }

  private reportGauges(): void {
    this.options.metrics.queued(this.scheduler.queued);
    this.options.metrics.inFlight(this.scheduler.running);
    this.options.metrics.heldBytes(this.heldBytes);
  }

  private safely(what: string, action: () => void): void {
    try {
      action();
    } catch (error) {
      this.options.logger.warn({ error: describeFailure(error) }, `order events: ${what} failed`);
    }
  }
}

/** What a held message costs in memory: its key, value and headers (as text). */
export function messageBytes(message: InboundMessage): number {
  let bytes = (message.key?.length ?? 0) + (message.value?.length ?? 0);
  for (const [name, value] of Object.entries(message.headers)) {
    bytes += name.length + value.length;
  }
  return bytes;
}

function partitionsOf(tps: readonly TopicPartition[]): number[] {
  return tps.map((tp) => tp.partition).sort((a, b) => a - b);
}

/** Resolves (or rejects) with `promise`, or rejects after `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
