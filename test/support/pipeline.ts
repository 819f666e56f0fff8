/**
 * End-to-end harness: the run's 1-node Apache Kafka cluster with topics of this test file
 * (the contract's four, prefixed per file), a fresh database, the Payflow sandbox over HTTP,
 * and one or more workers started exactly as `main.ts` starts them (startWorker), configured
 * for those topics through the environment like any deployment.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import type { WorkerOverrides } from '../../src/app.module.js';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/logging/logger.js';
import { outboundViolations } from '../../src/events/outbound-check.js';
import { startWorker, type Worker } from '../../src/worker.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';
import {
  createTopicSet,
  deleteTopics,
  testKafkaCluster,
  topicSetFor,
  type TopicSet,
} from './kafka-test-bed.js';
import type { SandboxOptions } from '../../src/sandbox/sandbox.server.js';
import { startTestSandbox, type SandboxHandle } from './sandbox.js';

export interface ConsumedMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: string | null;
  readonly value: string;
  readonly headers: Record<string, string>;
}

/**
 * Reads a topic from the beginning into memory. Every message it reads is checked against
 * the contracts (src/events: the schema of its event type, its headers and key, or the
 * dead-letter headers): `messages`, `json` and `waitFor` throw, failing the test, once one
 * of them broke its contract.
 */
export class TopicReader {
  private readonly received: ConsumedMessage[] = [];
  /** How the messages read so far break their contracts. */
  readonly contractViolations: string[] = [];

  private constructor(private readonly consumer: Consumer) {}

  static async start(kafka: Kafka, topic: string): Promise<TopicReader> {
    // A group of its own (one member), so that it sees every partition.
    const consumer = kafka.consumer({
      groupId: `reader-${randomUUID()}`,
      sessionTimeout: 6000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 100,
    });
    const reader = new TopicReader(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic: from, partition, message }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) {
          if (value !== undefined)
            headers[name] = Array.isArray(value) ? String(value[0]) : String(value);
        }
        const consumed: ConsumedMessage = {
          topic: from,
          partition,
          offset: message.offset,
          key: message.key?.toString('utf8') ?? null,
          value: message.value?.toString('utf8') ?? '',
          headers,
        };
        for (const problem of outboundViolations(consumed)) {
          reader.contractViolations.push(`${from}/${partition}/${message.offset}: ${problem}`);
        }
        reader.received.push(consumed);
        await Promise.resolve();
      },
    });
    return reader;
  }

  /** The messages read so far. */
  get messages(): ConsumedMessage[] {
    this.assertContracts();
    return this.received;
  }

  /** Parsed JSON values. */
  json<T = Record<string, unknown>>(): T[] {
    return this.messages.map((message) => JSON.parse(message.value) as T);
  }

  /** Throws when a message read so far broke its contract. */
  assertContracts(): void {
    if (this.contractViolations.length === 0) return;
    throw new Error(
      `published events break their contracts (src/events):\n${this.contractViolations.join('\n')}`,
    );
  }

  async waitFor(
    predicate: (messages: ConsumedMessage[]) => boolean,
    timeoutMs = 30_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.messages)) {
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms; have ${this.received.length} messages`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
  }
}

export interface Pipeline {
  /** The shared 1-node cluster of the run: never stop or restart it. */
  readonly cluster: KraftCluster;
  /** This file's topics; the worker is configured with them (TOPIC_ORDERS, …). */
  readonly topics: TopicSet;
  readonly kafka: Kafka;
  readonly sandbox: SandboxHandle;
  readonly database: TestDatabase;
  readonly config: AppConfig;
  readonly producer: Producer;
  /** A worker as main.ts starts it; `patch` changes settings of this worker only. */
  startWorker(overrides?: WorkerOverrides, patch?: Partial<AppConfig>): Promise<Worker>;
  /** Publishes ERP events keyed by orderId (raw strings are sent as they are). */
  publish(messages: ReadonlyArray<{ key: string | null; value: unknown }>): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The variables every test worker needs, in process or as a child process: its database,
 * Kafka and topics, the sandbox as Payflow, local listeners (public and management, on
 * ports the system chooses), no reconciliation poller.
 * Callers add what their test tunes.
 */
export function workerEnvironment(parts: {
  readonly databaseUrl: string;
  readonly brokers: string;
  readonly groupId: string;
  readonly topics: TopicSet;
  readonly sandbox: Pick<SandboxHandle, 'url' | 'partnerUrl'>;
}): Record<string, string> {
  return {
    DATABASE_URL: parts.databaseUrl,
    KAFKA_BROKERS: parts.brokers,
    KAFKA_GROUP_ID: parts.groupId,
    TOPIC_ORDERS: parts.topics.orders,
    TOPIC_PAYMENT_STATUS: parts.topics.status,
    TOPIC_SETTLEMENTS: parts.topics.settlements,
    PAYFLOW_BASE_URL: parts.sandbox.url,
    PAYFLOW_PARTNER_BASE_URL: parts.sandbox.partnerUrl,
    PAYFLOW_CLIENT_ID: 'sandbox-client',
    PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
    WEBHOOK_PUBLIC_BASE_URL: 'https://127.0.0.1:3443',
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    MANAGEMENT_PORT: '0',
    MANAGEMENT_HOST: '127.0.0.1',
    RECONCILE_ENABLED: 'false',
  };
}

export async function startPipeline(
  label: string,
  env: Record<string, string> = {},
  sandboxOptions: SandboxOptions = {},
): Promise<Pipeline> {
  const cluster = testKafkaCluster(1);
  const topics = topicSetFor(label);
  const [database, sandbox] = await Promise.all([
    createTestDatabase(label),
    startTestSandbox(sandboxOptions),
    createTopicSet(cluster, topics, { partitions: 12 }),
  ]);
  const config = loadConfig({
    ...workerEnvironment({
      databaseUrl: database.url,
      brokers: cluster.bootstrapServers,
      groupId: `payflow-bridge-${label}-${randomUUID().slice(0, 8)}`,
      topics,
      sandbox,
    }),
    DB_POOL_SIZE: '10',
    // Test speed: the broker's minimum session (a dead member leaves the group sooner) and
    // fetches that return within 100 ms when there is nothing new.
    KAFKA_SESSION_TIMEOUT: '6s',
    KAFKA_FETCH_MAX_WAIT: '100ms',
    PAYFLOW_REQUEST_TIMEOUT: '5s',
    // Test speed: a call found not applied is sent again 10 s after its request left (the
    // late-effect window), not after the production default of 3 minutes.
    PAYFLOW_LATE_EFFECT_WINDOW: '10s',
    LOG_LEVEL: 'silent',
    RETRY_MAX_ATTEMPTS: '5',
    ...env,
  });
  const kafka = new Kafka({
    clientId: `test-${label}`,
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const workers: Worker[] = [];
  return {
    cluster,
    topics,
    kafka,
    sandbox,
    database,
    config,
    producer,
    async startWorker(overrides = {}, patch = {}) {
      const worker = await startWorker({ ...config, ...patch }, silentLogger(), {
        relay: { idlePollMs: 100 },
        ...overrides,
      });
      workers.push(worker);
      return worker;
    },
    async publish(messages) {
      await producer.send({
        topic: topics.orders,
        messages: messages.map((message) => ({
          key: message.key,
          value: typeof message.value === 'string' ? message.value : JSON.stringify(message.value),
        })),
      });
    },
    async stop() {
      await Promise.allSettled(workers.map((worker) => worker.shutdown()));
      await producer.disconnect();
      await sandbox.close();
      await database.drop();
      await deleteTopics(cluster, topics);
    },
  };
}
