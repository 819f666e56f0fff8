/**
 * The real Kafka test bed as a test file sees it: the clusters kafka-global-setup.ts started
 * once for the run, and topics named per test file so that files running at the same time
 * never share a topic or a consumer group.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Admin, type ITopicConfig } from 'kafkajs';
import { createTopicsAndWait } from '../../src/messaging/kafka/kafka.topics.js';
import { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';

/** The contract's four topics of one test file. */
export interface TopicSet {
  readonly orders: string;
  readonly dlq: string;
  readonly status: string;
  readonly settlements: string;
}

/** The shared cluster of this test run: 1 node (default) or 3 nodes (fault tests only). */
export function testKafkaCluster(nodes: 1 | 3 = 1): KraftCluster {
  const variable = nodes === 1 ? 'TEST_KAFKA_1' : 'TEST_KAFKA_3';
  const descriptor = process.env[variable];
  if (descriptor === undefined) {
    throw new Error(`${variable} is not set: the Kafka test bed starts in jest's global set-up`);
  }
  return KraftCluster.attach(descriptor);
}

/** Topic names of the contract (CONTRACT §1), prefixed with a label unique to this file. */
export function topicSetFor(label: string): TopicSet {
  const prefix = `${label}-${randomUUID().slice(0, 8)}`;
  return {
    orders: `${prefix}.erp.orders.v1`,
    dlq: `${prefix}.erp.orders.v1.dlq`,
    status: `${prefix}.payflow.payment-status.v1`,
    settlements: `${prefix}.payflow.settlements.v1`,
  };
}

export interface CreateTopicsOptions {
  /** Partitions of the orders, DLQ and status topics (settlements get half). Default 12. */
  readonly partitions?: number;
  /** Topic configuration, e.g. `{ 'max.message.bytes': '8388608' }`. */
  readonly config?: Readonly<Record<string, string>>;
}

/** Creates the topic set on the cluster (replication factor = the cluster's size). */
export async function createTopicSet(
  cluster: KraftCluster,
  topics: TopicSet,
  options: CreateTopicsOptions = {},
): Promise<void> {
  const partitions = options.partitions ?? 12;
  const replicationFactor = Math.min(3, cluster.nodes.length);
  const configEntries = Object.entries(options.config ?? {}).map(([name, value]) => ({
    name,
    value,
  }));
  const specs: ITopicConfig[] = [
    { topic: topics.orders, numPartitions: partitions },
    { topic: topics.dlq, numPartitions: partitions },
    { topic: topics.status, numPartitions: partitions },
    { topic: topics.settlements, numPartitions: Math.max(1, Math.floor(partitions / 2)) },
  ].map((spec) => ({ ...spec, replicationFactor, configEntries }));
  await withAdmin(cluster, (admin) => createTopicsAndWait(admin, specs));
}

/** More topics of a test file, e.g. `topicNamesFor('relay', ['a', 'b'])` → `relay-1f2e3d4c.a`, … */
export function topicNamesFor<Name extends string>(
  label: string,
  names: readonly Name[],
): Record<Name, string> {
  const prefix = `${label}-${randomUUID().slice(0, 8)}`;
  return Object.fromEntries(names.map((name) => [name, `${prefix}.${name}`])) as Record<
    Name,
    string
  >;
}

/** Creates topics of `partitions` partitions each (replication factor = the cluster's size). */
export async function createTopics(
  cluster: KraftCluster,
  topics: readonly string[],
  partitions: number,
): Promise<void> {
  const replicationFactor = Math.min(3, cluster.nodes.length);
  await withAdmin(cluster, (admin) =>
    createTopicsAndWait(
      admin,
      topics.map((topic) => ({ topic, numPartitions: partitions, replicationFactor })),
    ),
  );
}

/** Deletes topics (a file's, at its end: the cluster outlives the file) and waits until gone. */
export async function deleteTopics(
  cluster: KraftCluster,
  topics: readonly string[] | TopicSet,
): Promise<void> {
  const names = isTopicSet(topics)
    ? [topics.orders, topics.dlq, topics.status, topics.settlements]
    : [...topics];
  await withAdmin(cluster, async (admin) => {
    await admin.deleteTopics({ topics: names });
    // Deletion takes effect on the brokers a moment later: wait until none lists them.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const listed = new Set(await admin.listTopics());
      if (!names.some((name) => listed.has(name))) return;
      if (Date.now() > deadline) throw new Error(`topics still listed: ${names.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
}

function isTopicSet(topics: readonly string[] | TopicSet): topics is TopicSet {
  return !Array.isArray(topics);
}

/** Runs `use` with a connected admin client of the cluster, disconnected afterwards. */
export async function withAdmin<T>(
  cluster: KraftCluster,
  use: (admin: Admin) => Promise<T>,
): Promise<T> {
  const admin = new Kafka({
    clientId: 'test-bed-admin',
    brokers: cluster.brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}
