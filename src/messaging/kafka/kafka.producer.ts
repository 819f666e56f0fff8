/**
 * MessageProducer over kafkajs, set for a real Apache Kafka cluster:
 *
 * - Idempotent (the default): the broker de-duplicates the producer's own retries by
 *   producer id and sequence number, so a retried request cannot write a message twice
 *   within one producer session, and per-partition order holds with up to 5 requests in
 *   flight (kafkajs `maxInFlightRequests` 5, the most idempotence keeps in order).
 * - acks = all (-1): every in-sync replica has the message before send() resolves.
 * - No compression; murmur2 partitioner (same key -> partition as the Java client);
 *   topics are never auto-created (`npx payflow-bridge topics create` makes them).
 *
 * What idempotence does not cover: a process that sends and crashes before it records
 * the send (the outbox relay before marking rows published) sends again from a new
 * session, so downstream still sees at-least-once and dedupes on eventId (CONTRACT §3).
 *
 * `idempotent: false` exists only for librdkafka's mock cluster (the demo), which cannot
 * serve InitProducerId to kafkajs; without it at most one request is in flight, so a
 * retried request still cannot overtake a later one.
 *
 * An ACL withdrawn while running: a send to a topic without WRITE fails at once with a
 * KafkaAuthorizationError (transient: the caller keeps its messages and sends again), the
 * denial is recorded (KafkaAuthorizationRecorder, read by /health/ready) and cleared by the
 * next send to that topic that succeeds. InitProducerId (needs IDEMPOTENT_WRITE on the
 * cluster, or WRITE on any topic) may be denied too when the producer is replaced: the
 * next send asks for a producer id again, before sending anything.
 */
import {
  CompressionTypes,
  Partitioners,
  type Admin,
  type Kafka,
  type Message,
  type Producer,
} from 'kafkajs';
import { AppError } from '../../errors/app-error.js';
import {
  asAuthorizationError,
  KAFKA_CLUSTER_RESOURCE,
  type KafkaAccess,
  type KafkaAuthorizationRecorder,
  type KafkaResourceType,
  withKafkaDenialsQuiet,
} from '../security/kafka-authorization.js';
import { murmur2 } from './murmur2.js';
import { createKafkaClient, type KafkaClientOptions } from './kafka.client.js';
import type { MessageProducer, OutboundMessage } from '../messaging.ports.js';

export interface KafkaProducerOptions {
  /**
   * Broker-side de-duplication of retries, order kept with 5 requests in flight. Default
   * true; false only for librdkafka's mock cluster (no InitProducerId for kafkajs).
   */
  readonly idempotent?: boolean;
  /** Time-out for the replicas' acknowledgement. */
  readonly ackTimeoutMs?: number;
  /** Where denials (an ACL withdrawn) and their end are recorded; /health/ready reads them. */
  readonly authorization?: KafkaAuthorizationRecorder;
}

export class KafkaMessageProducer implements MessageProducer {
  private readonly kafka: Kafka;
  private producer: Producer;
  private readonly idempotent: boolean;
  private readonly ackTimeoutMs: number;
  /** Partitions per topic, for Kafka's own key -> partition rule (cleared on a failure). */
  private readonly partitionCounts = new Map<string, Promise<number>>();
  private admin: Admin | undefined;
  private nullKeyCounter = 0;
  private readonly authorization: KafkaAuthorizationRecorder | undefined;
  /** The producer has no producer id yet (its InitProducerId failed): get one before sending. */
  private needsProducerId = false;

  constructor(client: KafkaClientOptions, options: KafkaProducerOptions = {}) {
    this.idempotent = options.idempotent ?? true;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 30_000;
    this.authorization = options.authorization;
    this.kafka = createKafkaClient(withKafkaDenialsQuiet(client));
    this.producer = this.newProducer();
  }

  private newProducer(): Producer {
    return this.kafka.producer({
      // Named, not left to kafkajs's default (which warns at every start): the Java client's
      // murmur2, so that ERP's Java consumers and ours agree on a key's partition. `send`
      // computes the same partition itself (partitionFor) and passes it explicitly.
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: this.idempotent,
      // Idempotence keeps order with up to 5 requests in flight; without it, only 1 does.
      maxInFlightRequests: this.idempotent ? 5 : 1,
      allowAutoTopicCreation: false,
    });
  }

  /** Connects and, idempotent, gets a producer id (InitProducerId). */
  async connect(): Promise<void> {
    try {
      await this.producer.connect();
    } catch (error) {
      // kafkajs would send without a producer id (not idempotent): never, ask again first.
      this.needsProducerId = this.idempotent;
      throw this.deniedOr(error, initProducerIdAccess);
    }
    this.needsProducerId = false;
    if (this.idempotent) this.authorization?.permitted(initProducerIdAccess('cluster'));
  }

  /**
   * Sends in order per partition, each partition's messages in chunks of at most
   * SEND_CHUNK_BYTES (a larger message goes alone); chunk k of every partition goes in
   * round k, one kafkajs sendBatch (one produce request per leader), rounds in order.
   *
   * - Every partition is checked in the answer: kafkajs 2.2.4, retrying a request that
   *   spans several leaders, skips the brokers that already answered, so a partition whose
   *   leader moved to one of them is left out while the send resolves (kafkajs issue 1303).
   *   A partition missing from the answer fails the send (ProduceIncompleteError), and the
   *   caller sends again (at least once: consumers dedupe on `eventId`). An earlier
   *   workaround, one request per partition, cost a request per partition per send.
   * - The partition is Kafka's own rule (murmur2 of the key, as the Java client and kafkajs's
   *   default partitioner), computed here from the topic's partition count.
   * - Chunks: the broker refuses a record batch above the topic's max.message.bytes, so a
   *   few dead-lettered documents of one order sent together would be refused forever.
   * - A broker that no longer knows this producer's id or sequence (after a whole-cluster
   *   restart: OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID, …) refuses every later send
   *   of this kafkajs producer, which never asks for a new id: it is replaced by a new one, and
   *   the failed send is reported so that the caller sends again.
   * - One topic per request: each topic's rounds are a send of their own (the topics in
   *   parallel). A produce request whose partitions partly fail (one topic's WRITE withdrawn)
   *   fails whole in kafkajs 2.2.4, which then rolls back the sequence numbers of the
   *   partitions the broker did write: their next batch would be taken for a duplicate and
   *   dropped, or refused as out of order. Within one topic an ACL refuses every partition.
   */
  async send(messages: readonly OutboundMessage[]): Promise<void> {
    if (messages.length === 0) return;
    if (this.needsProducerId) await this.connect();
    const byTopic = new Map<string, Map<number, PartitionMessages>>();
    for (const message of messages) {
      const partition = await this.partitionFor(message);
      let partitions = byTopic.get(message.topic);
      if (partitions === undefined) {
        partitions = new Map();
        byTopic.set(message.topic, partitions);
      }
      let group = partitions.get(partition);
      if (group === undefined) {
        group = { topic: message.topic, partition, messages: [] };
        partitions.set(partition, group);
      }
      group.messages.push(message);
    }
    const results = await Promise.allSettled(
      [...byTopic].map(([topic, partitions]) => this.sendTopic(topic, [...partitions.values()])),
    );
    const failures = results.flatMap((result) =>
      result.status === 'rejected' ? [result.reason as unknown] : [],
    );
    if (failures.length === 0) return;
    this.partitionCounts.clear();
    if (failures.some(isProducerStateLost)) await this.replaceProducer();
    throw failures[0];
  }

  /** One topic's messages: round k holds chunk k of every partition; rounds in order. */
  private async sendTopic(topic: string, groups: readonly PartitionMessages[]): Promise<void> {
    const rounds: PartitionMessages[][] = [];
    for (const group of groups) {
      chunksByBytes(group.messages, SEND_CHUNK_BYTES).forEach((chunk, index) => {
        (rounds[index] ??= []).push({ ...group, messages: chunk });
      });
    }
    const write = (resource: KafkaResourceType): KafkaAccess =>
      resource === 'topic'
        ? { resource, name: topic, operation: 'WRITE' }
        : initProducerIdAccess(resource);
    try {
      for (const round of rounds) await this.sendRound(round);
    } catch (error) {
      throw this.deniedOr(error, write);
    }
    this.authorization?.permitted(write('topic'));
  }

  /** `error` as a recorded KafkaAuthorizationError when it is a denial, else as it is. */
  private deniedOr(
    error: unknown,
    attempted: (resource: KafkaResourceType) => KafkaAccess,
  ): unknown {
    const denied = asAuthorizationError(error, attempted);
    if (denied === undefined) return error;
    this.authorization?.denied(denied.access, error);
    return denied;
  }

  private async partitionFor(message: OutboundMessage): Promise<number> {
    let count = this.partitionCounts.get(message.topic);
    if (count === undefined) {
      count = this.fetchPartitionCount(message.topic);
      this.partitionCounts.set(message.topic, count);
      count.catch(() => this.partitionCounts.delete(message.topic));
    }
    const partitions = await count;
    if (message.key === null) return this.nullKeyCounter++ % partitions;
    return partitionOfKey(message.key, partitions);
  }

  private async fetchPartitionCount(topic: string): Promise<number> {
    if (this.admin === undefined) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    const describe = (resource: KafkaResourceType): KafkaAccess =>
      resource === 'topic'
        ? { resource, name: topic, operation: 'DESCRIBE' }
        : { resource, name: KAFKA_CLUSTER_RESOURCE, operation: 'DESCRIBE' };
    let topics: Awaited<ReturnType<Admin['fetchTopicMetadata']>>['topics'];
    try {
      ({ topics } = await this.admin.fetchTopicMetadata({ topics: [topic] }));
    } catch (error) {
      throw this.deniedOr(error, describe);
    }
    this.authorization?.permitted(describe('topic'));
    const partitions = topics.find((found) => found.name === topic)?.partitions.length ?? 0;
    if (partitions === 0) throw new Error(`topic ${topic} has no partitions`);
    return partitions;
  }

  private async sendRound(round: readonly PartitionMessages[]): Promise<void> {
    const byTopic = new Map<string, Message[]>();
    for (const group of round) {
      const list = byTopic.get(group.topic) ?? [];
      for (const message of group.messages) {
        list.push({
          partition: group.partition,
          key: message.key,
          value: message.value,
          ...(message.headers === undefined ? {} : { headers: { ...message.headers } }),
        });
      }
      byTopic.set(group.topic, list);
    }
    const answers = await this.producer.sendBatch({
      topicMessages: [...byTopic].map(([topic, list]) => ({ topic, messages: list })),
      acks: -1,
      timeout: this.ackTimeoutMs,
      compression: CompressionTypes.None,
    });
    const missing = unacknowledged(round, answers);
    if (missing.length > 0) {
      throw new ProduceIncompleteError(
        `the broker acknowledged ${round.length - missing.length} of ${round.length} partitions; the send is repeated`,
        {
          metadata: {
            missing: missing
              .slice(0, 5)
              .map((group) => `${group.topic}/${group.partition}`)
              .join(','),
          },
        },
      );
    }
  }

  /**
   * A new kafkajs producer (a new producer id). When its InitProducerId fails (e.g. denied:
   * no WRITE left on any topic), the next send asks again before sending.
   */
  private async replaceProducer(): Promise<void> {
    const old = this.producer;
    this.producer = this.newProducer();
    this.needsProducerId = this.idempotent;
    await old.disconnect().catch(() => undefined);
    await this.connect().catch(() => undefined);
  }

  async disconnect(): Promise<void> {
    await Promise.all([
      this.producer.disconnect(),
      this.admin?.disconnect().catch(() => undefined),
    ]);
  }
}

interface PartitionMessages {
  readonly topic: string;
  readonly partition: number;
  readonly messages: OutboundMessage[];
}

const partitionId = (topic: string, partition: number): string => `${topic}\u0000${partition}`;

/** The partitions of a round that the broker's answers do not acknowledge (error code 0). */
export function unacknowledged<T extends { readonly topic: string; readonly partition: number }>(
  round: readonly T[],
  answers: readonly {
    readonly topicName: string;
    readonly partition: number;
    readonly errorCode: number;
  }[],
): T[] {
  const acknowledged = new Set(
    answers
      .filter((answer) => answer.errorCode === 0)
      .map((answer) => partitionId(answer.topicName, answer.partition)),
  );
  return round.filter((group) => !acknowledged.has(partitionId(group.topic, group.partition)));
}

/** A send resolved by kafkajs without an acknowledgement for each of its partitions. */
export class ProduceIncompleteError extends AppError {
  readonly code = 'kafka.produce_incomplete';
  readonly transient = true;
}

/**
 * What InitProducerId needs: IDEMPOTENT_WRITE on the cluster (or, since Kafka 2.8, WRITE on
 * any topic); a transactional producer (not used here) WRITE on its transactional id.
 */
function initProducerIdAccess(resource: KafkaResourceType): KafkaAccess {
  return resource === 'transactional_id'
    ? { resource, name: '(none)', operation: 'WRITE' }
    : { resource: 'cluster', name: KAFKA_CLUSTER_RESOURCE, operation: 'IDEMPOTENT_WRITE' };
}

/** Broker answers after which a kafkajs idempotent producer can never send again. */
const PRODUCER_STATE_LOST = new Set([
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_PRODUCER_EPOCH',
  'INVALID_PRODUCER_ID_MAPPING',
  'DUPLICATE_SEQUENCE_NUMBER',
]);

/** Is this (or what it wraps) one of PRODUCER_STATE_LOST? kafkajs nests causes. */
export function isProducerStateLost(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const type: unknown = Reflect.get(current, 'type');
    if (typeof type === 'string' && PRODUCER_STATE_LOST.has(type)) return true;
    current = Reflect.get(current, 'cause') ?? Reflect.get(current, 'originalError');
  }
  return false;
}

/** Kafka's default partition of a key: murmur2, made positive, modulo the partitions. */
export function partitionOfKey(key: string | Buffer, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/** Bytes of messages per produce request (kafkajs' batch.size analogue); see send(). */
export const SEND_CHUNK_BYTES = 1024 * 1024;

const lengthOf = (data: string | Buffer | null): number =>
  data === null ? 0 : typeof data === 'string' ? Buffer.byteLength(data) : data.length;

/** Consecutive runs of `messages` of at most `limit` bytes each (one larger message alone). */
export function chunksByBytes(
  messages: readonly OutboundMessage[],
  limit: number,
): OutboundMessage[][] {
  const chunks: OutboundMessage[][] = [];
  let current: OutboundMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    let size = lengthOf(message.key) + lengthOf(message.value);
    for (const [name, value] of Object.entries(message.headers ?? {})) {
      size += name.length + Buffer.byteLength(value);
    }
    if (current.length > 0 && bytes + size > limit) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export function createKafkaMessageProducer(
  client: KafkaClientOptions,
  options: KafkaProducerOptions = {},
): MessageProducer {
  return new KafkaMessageProducer(client, options);
}
