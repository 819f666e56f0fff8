/**
 * Kafka plumbing of the fault tests and the chaos campaign: topic creation, a paced
 * producer that keeps trying through broker and cluster outages, and a reader that takes a
 * topic from the beginning up to its end as it is now.
 */
import { createTopicsAndWait, waitForLeaders } from '../src/messaging/kafka/kafka.topics.js';
import { partitionOfKey } from '../src/messaging/kafka/kafka.producer.js';
import { randomUUID } from 'node:crypto';
import { Kafka, Partitioners, logLevel, type Producer } from 'kafkajs';
import type { PlannedEvent } from './order-load.js';

export function testbedKafka(brokers: readonly string[], clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: [...brokers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 5_000 },
  });
}

/** Creates the topics (idempotent: existing ones are left as they are). */
export async function createTopics(
  brokers: readonly string[],
  topics: readonly { readonly topic: string; readonly partitions: number }[],
  replicationFactor: number,
): Promise<void> {
  const admin = testbedKafka(brokers, 'testbed-admin').admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((spec) => !existing.has(spec.topic));
    await createTopicsAndWait(
      admin,
      missing.map((spec) => ({
        topic: spec.topic,
        numPartitions: spec.partitions,
        replicationFactor,
      })),
    );
  } finally {
    await admin.disconnect();
  }
}

/**
 * Sends ERP events keyed by order id (murmur2, as the Java client) at a fixed rate. A send
 * that fails (a broker or the whole cluster down) is tried again until it succeeds or
 * stop() is called: the events are resent in order, so an order's events keep their order,
 * and a copy that did land the first time is a redelivery the worker ignores (same eventId).
 */
export class PacedProducer {
  sent = 0;
  failedSends = 0;
  /** The last send error (for the report). */
  lastError: string | undefined;
  private stopping = false;

  private constructor(
    private producer: Producer,
    private readonly brokers: readonly string[],
    private readonly topic: string,
    private readonly partitions: number,
  ) {}

  static async start(brokers: readonly string[], topic: string): Promise<PacedProducer> {
    const admin = testbedKafka(brokers, 'testbed-load-admin').admin();
    await admin.connect();
    let partitions: number;
    try {
      // The broker this admin asks may not have applied a topic just created on another one
      // ("does not host this topic-partition"): wait for it as the topic creation does.
      await waitForLeaders(admin, [topic]);
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      partitions = topics[0]?.partitions.length ?? 0;
    } finally {
      await admin.disconnect();
    }
    if (partitions === 0) throw new Error(`topic ${topic} has no partitions`);
    return new PacedProducer(await PacedProducer.connect(brokers), brokers, topic, partitions);
  }

  /**
   * Not idempotent: after a failed send the batch is sent again by a new producer (a
   * kafkajs idempotent producer can be left failing every send after a leader change
   * while its records still land), and at most one request is in flight, so that a retry
   * inside kafkajs cannot reorder.
   */
  private static async connect(brokers: readonly string[]): Promise<Producer> {
    const producer = testbedKafka(brokers, 'testbed-load').producer({
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    return producer;
  }

  /** Sends `events` at `perSecond` (in sends every ~50 ms); resolves when all are sent. */
  async sendPaced(events: readonly PlannedEvent[], perSecond: number): Promise<void> {
    const started = performance.now();
    let next = 0;
    while (next < events.length && !this.stopping) {
      const due = Math.min(
        events.length,
        Math.floor(((performance.now() - started) / 1000) * perSecond) + 1,
      );
      if (due > next) {
        // At most 500 at once, so that a backlog after an outage goes out in bounded sends.
        const end = Math.min(due, next + 500);
        await this.sendSure(events.slice(next, end));
        next = end;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.producer.disconnect().catch(() => undefined);
  }

  /**
   * One request a partition (murmur2 of the order id, as the Java client), one at a time:
   * kafkajs 2.2.4 can silently drop a partition of a request that spans several leaders
   * when it retries it after a leader change (tulios/kafkajs#1303), as the worker's own
   * producer avoids too. A partition whose send failed is sent again, with those after it.
   */
  private async sendSure(events: readonly PlannedEvent[]): Promise<void> {
    const byPartition = new Map<number, PlannedEvent[]>();
    for (const event of events) {
      const partition = partitionOfKey(event.orderId, this.partitions);
      const group = byPartition.get(partition) ?? [];
      group.push(event);
      byPartition.set(partition, group);
    }
    const groups = [...byPartition];
    while (groups.length > 0) {
      const [partition, group] = groups[0] ?? [0, []];
      try {
        await this.producer.send({
          topic: this.topic,
          acks: -1,
          messages: group.map((event) => ({ partition, key: event.orderId, value: event.value })),
        });
        this.sent += group.length;
        groups.shift();
      } catch (error) {
        if (this.stopping) throw error;
        this.failedSends++;
        this.lastError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await this.producer.disconnect().catch(() => undefined);
        this.producer = await PacedProducer.connect(this.brokers).catch(() => this.producer);
      }
    }
  }
}

export interface TopicRecord {
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Every record of `topic` from the beginning up to the end offsets it has when called, in
 * partition order (so one key's records keep their order).
 */
export async function readTopicToEnd(
  brokers: readonly string[],
  topic: string,
  timeoutMs = 120_000,
): Promise<TopicRecord[]> {
  const kafka = testbedKafka(brokers, 'testbed-reader');
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const end = new Map(offsets.map((entry) => [entry.partition, BigInt(entry.high)]));
  const pending = new Set(
    offsets.filter((entry) => BigInt(entry.high) > BigInt(entry.low)).map((e) => e.partition),
  );
  const records: TopicRecord[] = [];
  if (pending.size === 0) return records;
  const consumer = kafka.consumer({
    groupId: `testbed-reader-${randomUUID()}`,
    sessionTimeout: 6_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200,
    maxBytes: 16 * 1024 * 1024,
  });
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const last = end.get(batch.partition) ?? 0n;
        for (const message of batch.messages) {
          if (BigInt(message.offset) >= last) break;
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(message.headers ?? {})) {
            if (value !== undefined) {
              headers[name] = Array.isArray(value) ? String(value[0]) : String(value);
            }
          }
          records.push({
            partition: batch.partition,
            offset: message.offset,
            key: message.key?.toString('utf8') ?? null,
            value: message.value?.toString('utf8') ?? '',
            headers,
          });
          if (BigInt(message.offset) + 1n >= last) pending.delete(batch.partition);
        }
        if (pending.size === 0) done();
        await Promise.resolve();
      },
    });
    const timedOut = await Promise.race([
      finished.then(() => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(true), timeoutMs).unref()),
    ]);
    if (timedOut) {
      throw new Error(
        `reading ${topic}: partitions ${[...pending].join(',')} not read to the end in ${timeoutMs} ms`,
      );
    }
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
  return records;
}
