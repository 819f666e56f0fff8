/**
 * The worker end to end on the secured test bed (testbed/kafka/secured-cluster.ts): its own
 * secured one-node cluster, the contract's four topics created by the admin, a principal
 * holding exactly the worker's least privilege (workerAcls, CONTRACT §9), a fresh database,
 * the Payflow sandbox, and one worker started as main.ts starts it (SCRAM-SHA-512 over
 * SASL_SSL, verifying the brokers' certificate). Orders are published, and what the worker
 * wrote is read, as the admin (a super user). The worker's log lines (info and above) are
 * kept for the test to read.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Kafka, type Admin, type Producer } from 'kafkajs';
import { pino } from 'pino';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import {
  workerAcls,
  type KafkaAcl,
  type KafkaAclConfig,
} from '../../src/messaging/security/kafka-acls.js';
import { startWorker, type Worker } from '../../src/worker.js';
import { SecuredKafkaCluster } from '../../testbed/kafka/secured-cluster.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { topicSetFor, type TopicSet } from './kafka-test-bed.js';
import { TopicReader, workerEnvironment } from './pipeline.js';
import { startTestSandbox, type SandboxHandle } from './sandbox.js';

/** One JSON log line of the worker. */
export type LogLine = Readonly<Record<string, unknown>> & {
  readonly level: number;
  readonly msg?: string;
};

export interface SecuredPipeline {
  readonly kafka: SecuredKafkaCluster;
  readonly topics: TopicSet;
  readonly groupId: string;
  /** The worker's principal, e.g. `User:worker`. */
  readonly principal: string;
  /** The ACLs it was granted: exactly workerAcls(). */
  readonly acls: readonly KafkaAcl[];
  readonly database: TestDatabase;
  readonly sandbox: SandboxHandle;
  readonly config: AppConfig;
  /** A kafkajs client of the super user `admin`. */
  readonly admin: Kafka;
  readonly producer: Producer;
  readonly worker: Worker;
  /** The worker's log lines so far (info and above). */
  readonly logs: readonly LogLine[];
  /** Publishes to the orders topic as the admin (raw strings are sent as they are). */
  publish(messages: ReadonlyArray<{ key: string | null; value: unknown }>): Promise<void>;
  /** Reads a topic from the beginning, as the admin. */
  read(topic: string): Promise<TopicReader>;
  /** The sum of a topic's end offsets (high watermarks). */
  endOffsets(topic: string): Promise<number>;
  /** The sum of the worker group's committed offsets on the orders topic. */
  committedOffsets(): Promise<number>;
  /** The worker's ACL on `topic` (or the group) for `operation`, as granted. */
  acl(
    resourceType: KafkaAcl['resourceType'],
    name: string,
    operation: KafkaAcl['operation'],
  ): KafkaAcl;
  stop(): Promise<void>;
}

export interface SecuredPipelineOptions {
  /** Partitions of each topic. Default 6. */
  readonly partitions?: number;
  /** More worker variables (they win). */
  readonly env?: Readonly<Record<string, string>>;
}

const USER = 'worker';

export async function startSecuredPipeline(
  label: string,
  options: SecuredPipelineOptions = {},
): Promise<SecuredPipeline> {
  const topics = topicSetFor(label);
  const groupId = `payflow-bridge-${label}-${randomUUID().slice(0, 8)}`;
  const [kafka, database, sandbox] = await Promise.all([
    SecuredKafkaCluster.start({ users: [USER] }),
    createTestDatabase(label),
    startTestSandbox(),
  ]);
  const cleanUp: (() => Promise<unknown>)[] = [
    () => kafka.stop(),
    () => database.drop(),
    () => sandbox.close(),
  ];
  const undo = async (): Promise<void> => {
    for (const step of cleanUp.splice(0).reverse()) await step().catch(() => undefined);
  };
  try {
    await kafka.createTopics(
      [topics.orders, topics.dlq, topics.status, topics.settlements],
      options.partitions ?? 6,
    );
    const aclConfig: KafkaAclConfig = {
      KAFKA_GROUP_ID: groupId,
      TOPIC_ORDERS: topics.orders,
      TOPIC_PAYMENT_STATUS: topics.status,
      TOPIC_SETTLEMENTS: topics.settlements,
    };
    const principal = `User:${USER}`;
    const acls = workerAcls(aclConfig);
    await kafka.grantAcls(principal, acls);
    const config = loadConfig({
      ...workerEnvironment({
        databaseUrl: database.url,
        brokers: kafka.brokers.saslSsl.join(','),
        groupId,
        topics,
        sandbox,
      }),
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: kafka.caFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: USER,
      KAFKA_SASL_PASSWORD: kafka.password(USER),
      MANAGEMENT_PORT: '0',
      MANAGEMENT_HOST: '127.0.0.1',
      DB_POOL_SIZE: '10',
      KAFKA_SESSION_TIMEOUT: '6s',
      KAFKA_FETCH_MAX_WAIT: '100ms',
      PAYFLOW_REQUEST_TIMEOUT: '5s',
      RETRY_MAX_ATTEMPTS: '5',
      LOG_LEVEL: 'info',
      ...options.env,
    });
    const admin = new Kafka(kafka.adminConfig(`${label}-admin-${randomUUID().slice(0, 6)}`));
    const producer = admin.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    cleanUp.push(() => producer.disconnect());
    const logs: LogLine[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n')) {
            if (line.trim() !== '') logs.push(JSON.parse(line) as LogLine);
          }
          done();
        },
      }),
    );
    const worker = await startWorker(config, logger, { relay: { idlePollMs: 100 } });
    cleanUp.push(() => worker.shutdown());
    const readers: TopicReader[] = [];
    const withAdmin = async <T>(use: (client: Admin) => Promise<T>): Promise<T> => {
      const client = admin.admin();
      await client.connect();
      try {
        return await use(client);
      } finally {
        await client.disconnect();
      }
    };
    return {
      kafka,
      topics,
      groupId,
      principal,
      acls,
      database,
      sandbox,
      config,
      admin,
      producer,
      worker,
      logs,
      async publish(messages) {
        await producer.send({
          topic: topics.orders,
          messages: messages.map((message) => ({
            key: message.key,
            value:
              typeof message.value === 'string' ? message.value : JSON.stringify(message.value),
          })),
        });
      },
      async read(topic) {
        const reader = await TopicReader.start(admin, topic);
        readers.push(reader);
        return reader;
      },
      endOffsets(topic) {
        return withAdmin(async (client) => {
          const offsets = await client.fetchTopicOffsets(topic);
          return offsets.reduce((sum, partition) => sum + Number(partition.high), 0);
        });
      },
      committedOffsets() {
        return withAdmin(async (client) => {
          const [committed] = await client.fetchOffsets({ groupId, topics: [topics.orders] });
          return (committed?.partitions ?? []).reduce(
            (sum, partition) => sum + Math.max(0, Number(partition.offset)),
            0,
          );
        });
      },
      acl(resourceType, name, operation) {
        const found = acls.find(
          (acl) =>
            acl.resourceType === resourceType &&
            acl.resourceName === name &&
            acl.operation === operation,
        );
        if (found === undefined) {
          throw new Error(`the worker has no ${operation} on ${resourceType} ${name}`);
        }
        return found;
      },
      async stop() {
        await Promise.allSettled(readers.map((reader) => reader.stop()));
        await undo();
      },
    };
  } catch (error) {
    await undo();
    throw error;
  }
}
