/**
 * The consumer-group client as the inbound-events transport sees it. kafka.consumer.ts
 * implements it over kafkajs; nothing else in the transport knows the client library.
 */
import type { InboundMessage } from '../messaging.ports.js';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export interface TopicPartitionOffset extends TopicPartition {
  /** The next offset to consume, as decimal text. */
  readonly offset: string;
}

/** Messages fetched from one partition, in offset order. */
export interface ConsumedBatch extends TopicPartition {
  readonly messages: readonly InboundMessage[];
  /** The partition's high watermark when fetched (decimal text). */
  readonly highWatermark: string;
}

export interface BatchControl {
  /**
   * Moves the client's fetch position past `offset` (it does not commit). Offsets of a
   * batch that are not resolved are fetched again later.
   */
  resolveOffset(offset: string): void;
  /**
   * Keeps the group membership alive while `onBatch` waits (rate-limited by the client).
   * Rejects when the group is rebalancing: let that error propagate out of `onBatch`.
   */
  heartbeat(): Promise<void>;
}

export interface PartitionConsumerHandlers {
  /**
   * A fetched batch. Slow work is scheduled, not awaited; it may wait (heartbeating) for
   * room when the in-flight limit is reached. Rejects only with a `heartbeat` error.
   */
  onBatch(batch: ConsumedBatch, control: BatchControl): Promise<void>;
  /** The member's assignment after every (re)join of the group. */
  onAssignment(assignment: readonly TopicPartition[]): void;
  /** The group is rebalancing: a good moment to commit what is done. */
  onRebalancing(): void;
  /** The client stopped on an error; `restarting` says whether it recovers by itself. */
  onCrash(error: Error, restarting: boolean): void;
  /**
   * The client is alive and talking to the group: a fetch came back (also an empty one)
   * or a heartbeat was sent. Feeds the transport's "stuck" watchdog.
   */
  onProgress?(): void;
}

export interface PartitionConsumer {
  connect(): Promise<void>;
  subscribe(topic: string, options: { readonly fromBeginning: boolean }): Promise<void>;
  /** Starts fetching; resolves once the member joined the group. Auto-commit is off. */
  run(handlers: PartitionConsumerHandlers): Promise<void>;
  pause(partitions: readonly TopicPartition[]): void;
  resume(partitions: readonly TopicPartition[]): void;
  /** Commits offsets for the current generation of the group. */
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void>;
  /** Stops fetching, leaves the group and closes the connections. */
  disconnect(): Promise<void>;
}
