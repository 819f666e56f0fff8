/**
 * PartitionConsumer over a kafkajs consumer: eachBatch with manual commits and manual offset
 * resolution, GROUP_JOIN / REBALANCING / CRASH events turned into handler calls.
 *
 * The defaults are for real Apache Kafka: kafkajs' own assignor, a 10 s session (1 s
 * heartbeats), a 60 s rebalance time-out, 1 s fetch wait.
 *
 * Recovery from a dead replica (SIGKILL, a frozen pod): the coordinator notices only when
 * its session times out; the others learn of the rebalance at their next heartbeat, rejoin
 * (eachBatch only enqueues, so no batch holds a rejoin up; a batch waiting for room
 * heartbeats and leaves on REBALANCE_IN_PROGRESS), and fetch its partitions from the
 * committed offsets: consumed again 0-3.5 s after the session time-out
 * (bench/results/scale.json). A replacement that joins meanwhile does not shorten that: it
 * joins with a new member id (kafkajs has no static membership), and the join waits for the
 * dead member's session to end; with eager rebalancing every partition of the group pauses
 * until then. The rebalance time-out bounds only a live member slow to rejoin; it stays at
 * kafkajs' 60 s, since a JoinGroup waits up to the group's largest one and a lower value
 * would time out JoinGroups against older replicas during a rolling upgrade. Fetch sizes: a partition's first record batch is returned whole even when it is
 * larger than maxBytesPerPartition / maxBytes (KIP-74, Fetch v3+), so a 5 MB event is
 * consumed with the 1 MiB / 10 MiB defaults; the limits bound only how much more a fetch
 * brings along (memory held before the in-flight bound admits it).
 *
 * An ACL withdrawn while running (READ on the topic or the group): kafkajs stops the consumer
 * for good (authorization errors are not retriable for it). This adapter records the denial
 * (KafkaAuthorizationRecorder, read by /health/ready), tells the handlers that the client
 * restarts, and runs the kafkajs consumer again after a back-off (1 s doubling to 15 s), as
 * long as it takes: once READ is back it joins the group and fetches from the committed
 * offsets, so no offset is skipped; the delivery engine skips what it already holds.
 * Meanwhile commits fail with the denial (kafkajs would resolve them without committing
 * while it is not running). A denial ends on evidence only: a join or a heartbeat for the
 * group, a fetch that came back for the topic.
 */
import type {
  Consumer,
  ConsumerRunConfig,
  IHeaders,
  KafkaMessage,
  PartitionAssigner,
} from 'kafkajs';
import { backoffDelayMs, type BackoffPolicy } from '../../timing/backoff.js';
import { decideClientStop } from '../transport/failure-policy.js';
import {
  asAuthorizationError,
  KafkaAuthorizationError,
  KAFKA_CLUSTER_RESOURCE,
  type KafkaAccess,
  type KafkaAuthorizationRecorder,
  type KafkaResourceType,
  withKafkaDenialsQuiet,
} from '../security/kafka-authorization.js';
import { createKafkaClient, type KafkaClientOptions } from './kafka.client.js';
import type {
  PartitionConsumer,
  PartitionConsumerHandlers,
  TopicPartition,
  TopicPartitionOffset,
} from '../transport/consumer.port.js';
import type { InboundMessage } from '../messaging.ports.js';

/** A kafkajs partition assigner (tests may pass their own). */
export type KafkaPartitionAssigner = PartitionAssigner;

export interface KafkaConsumerOptions {
  /** KAFKA_GROUP_ID. */
  readonly groupId: string;
  /**
   * Default 10000 (kafkajs' own is 30000): a dead member's partitions move after this long.
   * The broker's group.min/max.session.timeout.ms (6 s / 30 min by default) bound it.
   */
  readonly sessionTimeoutMs?: number;
  /** Default sessionTimeout / 10, at most 3000. */
  readonly heartbeatIntervalMs?: number;
  /** Time a rebalance waits for members to rejoin (kafkajs default 60000). */
  readonly rebalanceTimeoutMs?: number;
  /**
   * Fetch long-poll. kafkajs defaults to 5000; we use 1000 because disconnect() waits for
   * an open fetch, and with every partition paused (draining) kafkajs sleeps this long.
   */
  readonly maxWaitTimeInMs?: number;
  /** Soft limit per partition and fetch (kafkajs default 1 MiB; see above). */
  readonly maxBytesPerPartition?: number;
  /** Soft limit per fetch response (kafkajs default 10 MiB; see above). */
  readonly maxBytes?: number;
  /** Default: kafkajs' own (round robin). */
  readonly partitionAssigners?: readonly KafkaPartitionAssigner[];
  /**
   * Batches handled at once by kafkajs. eachBatch only enqueues (it waits just when the
   * in-flight limit is reached, and then nothing else could be taken either), so 1 is plenty.
   */
  readonly partitionsConsumedConcurrently?: number;
  /** Where denials (an ACL withdrawn) and their end are recorded; /health/ready reads them. */
  readonly authorization?: KafkaAuthorizationRecorder;
  /** Restarts after an authorization failure: default 1 s doubling to 15 s (equal jitter). */
  readonly restartBackoff?: BackoffPolicy;
}

/** KAFKA_SESSION_TIMEOUT's default (config/env/kafka.env.ts): see above. */
const DEFAULT_SESSION_TIMEOUT_MS = 10_000;

const DEFAULT_RESTART_BACKOFF: BackoffPolicy = { baseDelayMs: 1_000, maxDelayMs: 15_000 };

export class KafkaPartitionConsumer implements PartitionConsumer {
  private readonly consumer: Consumer;
  private readonly partitionsConsumedConcurrently: number;
  private readonly removeListeners: (() => void)[] = [];
  private readonly groupId: string;
  private readonly authorization: KafkaAuthorizationRecorder | undefined;
  private readonly restartBackoff: BackoffPolicy;
  private topics: readonly string[] = [];
  private runConfig: ConsumerRunConfig | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  /** Restarts since the last fetch that came back. */
  private restarts = 0;
  private stopped = false;
  /** The denials this consumer met that last, by resource type (`topic` or `group`). */
  private readonly denials = new Map<KafkaResourceType, KafkaAuthorizationError>();

  constructor(client: KafkaClientOptions, options: KafkaConsumerOptions) {
    const sessionTimeout = options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
    this.partitionsConsumedConcurrently = options.partitionsConsumedConcurrently ?? 1;
    this.groupId = options.groupId;
    this.authorization = options.authorization;
    this.restartBackoff = options.restartBackoff ?? DEFAULT_RESTART_BACKOFF;
    // While a denial lasts, kafkajs' "group coordinator not found" is that denial too.
    const quiet = withKafkaDenialsQuiet(
      client,
      (text) => this.denials.size > 0 && COORDINATOR_NOT_FOUND.test(text),
    );
    this.consumer = createKafkaClient(quiet).consumer({
      groupId: options.groupId,
      sessionTimeout,
      heartbeatInterval:
        options.heartbeatIntervalMs ?? Math.min(3_000, Math.floor(sessionTimeout / 10)),
      rebalanceTimeout: options.rebalanceTimeoutMs ?? 60_000,
      maxWaitTimeInMs: options.maxWaitTimeInMs ?? 1_000,
      ...(options.maxBytesPerPartition === undefined
        ? {}
        : { maxBytesPerPartition: options.maxBytesPerPartition }),
      ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
      ...(options.partitionAssigners === undefined
        ? {}
        : { partitionAssigners: [...options.partitionAssigners] }),
      allowAutoTopicCreation: false,
    });
  }

  /** The kafkajs consumer, for diagnostics (what `unwrap()` of the transport returns). */
  get client(): Consumer {
    return this.consumer;
  }

  connect(): Promise<void> {
    return this.consumer.connect();
  }

  subscribe(topic: string, options: { readonly fromBeginning: boolean }): Promise<void> {
    this.topics = [...this.topics, topic];
    return this.consumer.subscribe({ topics: [topic], fromBeginning: options.fromBeginning });
  }

  async run(handlers: PartitionConsumerHandlers): Promise<void> {
    const { events } = this.consumer;
    this.removeListeners.push(
      this.consumer.on(events.GROUP_JOIN, (event) => {
        // JoinGroup needs READ on the group.
        this.permitted('group');
        const assignment = Object.entries(event.payload.memberAssignment).flatMap(
          ([topic, partitions]) => partitions.map((partition) => ({ topic, partition })),
        );
        handlers.onAssignment(assignment);
      }),
      this.consumer.on(events.REBALANCING, () => handlers.onRebalancing()),
      this.consumer.on(events.CRASH, (event) =>
        this.onCrash(handlers, event.payload.error, event.payload.restart),
      ),
      this.consumer.on(events.FETCH, () => {
        // A fetch came back: READ on the topic is granted (Fetch needs it).
        this.restarts = 0;
        this.permitted('topic');
        handlers.onProgress?.();
      }),
      this.consumer.on(events.HEARTBEAT, () => {
        // Heartbeat needs READ on the group.
        this.permitted('group');
        handlers.onProgress?.();
      }),
    );
    this.runConfig = {
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.partitionsConsumedConcurrently,
      eachBatch: async (payload) => {
        if (!payload.isRunning() || payload.isStale()) return;
        const { batch } = payload;
        await handlers.onBatch(
          {
            topic: batch.topic,
            partition: batch.partition,
            highWatermark: batch.highWatermark,
            messages: batch.messages.map((message) =>
              toInboundMessage(batch.topic, batch.partition, message),
            ),
          },
          {
            resolveOffset: (offset) => payload.resolveOffset(offset),
            heartbeat: () => payload.heartbeat(),
          },
        );
      },
    };
    await this.consumer.run(this.runConfig);
  }

  /**
   * kafkajs stopped. It restarts by itself after a retriable error; after an authorization
   * failure (not retriable for kafkajs) this adapter restarts it, after a back-off, for as
   * long as the denial lasts (failure-policy.ts decides by the error's class); any other
   * error stops the consumer for good, as before.
   */
  private onCrash(handlers: PartitionConsumerHandlers, error: Error, restarting: boolean): void {
    if (restarting || this.stopped) {
      handlers.onCrash(error, restarting);
      return;
    }
    const denied = this.deniedBy(error);
    if (denied === undefined || decideClientStop(denied) === 'give_up') {
      handlers.onCrash(error, false);
      return;
    }
    this.recordDenial(denied, error);
    // Kafka answered: a denial is no sign of a stuck client (the transport's watchdog).
    handlers.onProgress?.();
    handlers.onCrash(denied, true);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.stopped || this.restartTimer !== undefined) return;
    this.restarts++;
    const delay = backoffDelayMs(this.restarts, this.restartBackoff);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.restart();
    }, delay);
  }

  /**
   * Runs the kafkajs consumer again (it disconnected itself before saying it crashed). A
   * failure to connect or join comes back as another CRASH, and so another restart.
   */
  private async restart(): Promise<void> {
    const config = this.runConfig;
    if (this.stopped || config === undefined) return;
    try {
      await this.consumer.run(config);
    } catch {
      // run() rejects only on misuse (e.g. running already): the next CRASH says more.
    }
  }

  /**
   * The denial `error` is, if any. kafkajs hides FindCoordinator's answer (it throws
   * KafkaJSGroupCoordinatorNotFound without a cause); FindCoordinator needs DESCRIBE on the
   * group, which READ implies: while this consumer restarts after a denial, that is the
   * group's ACL (otherwise it stops the consumer for good, as before).
   */
  private deniedBy(error: Error): KafkaAuthorizationError | undefined {
    const denied = asAuthorizationError(error, (resource) => this.accessTo(resource));
    if (denied !== undefined) return denied;
    if (this.denials.size > 0 && isGroupCoordinatorNotFound(error)) {
      return new KafkaAuthorizationError(this.accessTo('group'), error);
    }
    return undefined;
  }

  private recordDenial(denied: KafkaAuthorizationError, error: unknown): void {
    this.denials.set(denied.access.resource, denied);
    this.authorization?.denied(denied.access, error);
  }

  /** Evidence that `resource` is readable again: its denial, if any, is over. */
  private permitted(resource: 'topic' | 'group'): void {
    if (!this.denials.delete(resource)) return;
    this.authorization?.permitted(this.accessTo(resource));
  }

  /** What this consumer was attempting on a resource of `resource`'s type. */
  private accessTo(resource: KafkaResourceType): KafkaAccess {
    switch (resource) {
      case 'topic':
        return { resource, name: this.topics.join(','), operation: 'READ' };
      case 'group':
        return { resource, name: this.groupId, operation: 'READ' };
      case 'cluster':
        return { resource, name: KAFKA_CLUSTER_RESOURCE, operation: 'DESCRIBE' };
      case 'transactional_id':
        return { resource, name: this.groupId, operation: 'DESCRIBE' };
    }
  }

  pause(partitions: readonly TopicPartition[]): void {
    if (partitions.length > 0) this.consumer.pause(groupByTopic(partitions));
  }

  resume(partitions: readonly TopicPartition[]): void {
    if (partitions.length > 0) this.consumer.resume(groupByTopic(partitions));
  }

  /**
   * OffsetCommit needs READ on the group and on the topic. While a denial lasts the commit
   * fails with it: kafkajs, stopped or joining, would resolve it without committing.
   */
  async commit(offsets: readonly TopicPartitionOffset[]): Promise<void> {
    const pending = this.denials.values().next();
    if (!pending.done) throw pending.value;
    try {
      await this.consumer.commitOffsets(offsets.map((offset) => ({ ...offset })));
    } catch (error) {
      const denied = asAuthorizationError(error, (resource) => this.accessTo(resource));
      if (denied === undefined) throw error;
      this.recordDenial(denied, error);
      throw denied;
    }
  }

  async disconnect(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer !== undefined) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    try {
      await this.consumer.disconnect();
    } finally {
      for (const remove of this.removeListeners.splice(0)) remove();
    }
  }
}

export function createKafkaPartitionConsumer(
  client: KafkaClientOptions,
  options: KafkaConsumerOptions,
): KafkaPartitionConsumer {
  return new KafkaPartitionConsumer(client, options);
}

const COORDINATOR_NOT_FOUND = /KafkaJSGroupCoordinatorNotFound|Failed to find group coordinator/;

/** kafkajs found no coordinator for the group (it swallows why), possibly wrapped. */
function isGroupCoordinatorNotFound(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 6; depth++) {
    if (current.name === 'KafkaJSGroupCoordinatorNotFound') return true;
    current = Reflect.get(current, 'cause') ?? Reflect.get(current, 'originalError');
  }
  return false;
}

function groupByTopic(
  partitions: readonly TopicPartition[],
): { topic: string; partitions: number[] }[] {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of partitions) {
    const list = byTopic.get(topic);
    if (list === undefined) byTopic.set(topic, [partition]);
    else list.push(partition);
  }
  return [...byTopic].map(([topic, list]) => ({ topic, partitions: list }));
}

/**
 * Header values as text; a repeated header keeps its last value. NUL (U+0000) in a name or
 * value becomes U+FFFD, as an undecodable byte does: the headers are stored as jsonb with a
 * dead letter, and jsonb cannot hold NUL (the dead letter could never be written).
 */
function headersOf(headers: IHeaders | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  if (headers === undefined) return result;
  for (const [name, raw] of Object.entries(headers)) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value === undefined) continue;
    const text = typeof value === 'string' ? value : value.toString('utf8');
    result[withoutNul(name)] = withoutNul(text);
  }
  return result;
}

function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\ufffd') : text;
}

export function toInboundMessage(
  topic: string,
  partition: number,
  message: KafkaMessage,
): InboundMessage {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key ?? null,
    value: message.value,
    headers: headersOf(message.headers),
    timestamp: message.timestamp,
  };
}
