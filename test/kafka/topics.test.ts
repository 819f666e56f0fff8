/**
 * The topics of the configuration on real Kafka: the worker refuses to start while one is
 * missing, naming each (startWorker's rejection, and the compiled worker's exit code and
 * lines), and `topics create` makes the missing ones, idempotently, with the options given.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigSource } from 'kafkajs';
import { loadConfig, type AppConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/logging/logger.js';
import { TopicsMissingError } from '../../src/messaging/kafka/topics.port.js';
import { startWorker } from '../../src/worker.js';
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';
import { buildCli, runBinary } from '../cli/cli-test-kit.js';
import { runCompiled } from '../support/compiled.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  createTopicSet,
  createTopics,
  deleteTopics,
  testKafkaCluster,
  topicSetFor,
  withAdmin,
  type TopicSet,
} from '../support/kafka-test-bed.js';

const names = (topics: TopicSet): string[] => [
  topics.orders,
  topics.dlq,
  topics.status,
  topics.settlements,
];

function environment(cluster: KraftCluster, topics: TopicSet, databaseUrl: string) {
  return {
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: cluster.bootstrapServers,
    TOPIC_ORDERS: topics.orders,
    TOPIC_PAYMENT_STATUS: topics.status,
    TOPIC_SETTLEMENTS: topics.settlements,
    PAYFLOW_BASE_URL: 'http://127.0.0.1:9',
    PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:9/partner',
    PAYFLOW_CLIENT_ID: 'sandbox-client',
    PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
    WEBHOOK_PUBLIC_BASE_URL: 'https://127.0.0.1:3443',
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    MANAGEMENT_PORT: '0',
    MANAGEMENT_HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
  };
}

async function describeTopics(
  cluster: KraftCluster,
  topics: readonly string[],
): Promise<Map<string, { partitions: number; replicas: number; maxMessageBytes?: string }>> {
  return withAdmin(cluster, async (admin) => {
    const { topics: described } = await admin.fetchTopicMetadata({ topics: [...topics] });
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: topics.map((name) => ({ type: 2, name, configNames: ['max.message.bytes'] })),
    });
    const maxBytes = new Map(
      configs.resources.map((resource) => [
        resource.resourceName,
        resource.configEntries.find((entry) => entry.configName === 'max.message.bytes'),
      ]),
    );
    return new Map(
      described.map((topic) => {
        const entry = maxBytes.get(topic.name);
        return [
          topic.name,
          {
            partitions: topic.partitions.length,
            replicas: topic.partitions[0]?.replicas.length ?? 0,
            // Set on the topic itself (TOPIC_CONFIG), not inherited from the broker.
            ...(entry !== undefined && entry.configSource === ConfigSource.TOPIC_CONFIG
              ? { maxMessageBytes: entry.configValue }
              : {}),
          },
        ];
      }),
    );
  });
}

describe('topics of the configuration', () => {
  const cluster = testKafkaCluster(1);
  const created: TopicSet[] = [];
  let database: TestDatabase;
  let built: Promise<void>;

  const freshTopics = (label: string): TopicSet => {
    const topics = topicSetFor(label);
    created.push(topics);
    return topics;
  };

  beforeAll(async () => {
    // The binaries are compiled once, meanwhile the first tests run in-process.
    built = buildCli();
    database = await createTestDatabase('topics');
  });

  afterAll(async () => {
    await Promise.allSettled([
      ...created.map((topics) => deleteTopics(cluster, topics)),
      database.drop(),
      built,
    ]);
  });

  it('refuses to start the worker, naming each missing topic', async () => {
    const topics = freshTopics('topics_missing');
    await createTopicSet(cluster, topics, { partitions: 1 });
    await deleteTopics(cluster, [topics.dlq, topics.settlements]);
    const config: AppConfig = loadConfig(environment(cluster, topics, database.url));
    const refusal = await startWorker(config, silentLogger()).then(
      () => new Error('the worker started'),
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(TopicsMissingError);
    const missing = refusal as TopicsMissingError;
    expect(missing.code).toBe('kafka.topics_missing');
    expect(missing.topics).toEqual([topics.dlq, topics.settlements]);

    await built;
    const result = await runCompiled(
      'dist/src/main.js',
      environment(cluster, topics, database.url),
    );
    expect(result.code).toBe(1);
    expect(result.err.trim().split('\n')).toEqual([
      `payflow-bridge: topic ${topics.dlq} does not exist (create it: npx payflow-bridge topics create)`,
      `payflow-bridge: topic ${topics.settlements} does not exist (create it: npx payflow-bridge topics create)`,
    ]);
  }, 180_000);

  it('creates the missing topics, then says they exist (idempotent)', async () => {
    const topics = freshTopics('topics_create');
    await built;
    const env = environment(cluster, topics, database.url);
    // One exists already, with its own partitions: left as it is.
    await createTopics(cluster, [topics.status], 2);

    const first = await runBinary(['topics', 'create', '--partitions', '3'], env);
    expect(first).toMatchObject({ code: 0, err: '' });
    expect(first.out.trim().split('\n')).toEqual([
      `created ${topics.orders} (3 partitions, replication factor 1)`,
      `created ${topics.dlq} (3 partitions, replication factor 1)`,
      `exists ${topics.status} (2 partitions, replication factor 1)`,
      `created ${topics.settlements} (3 partitions, replication factor 1)`,
    ]);
    const described = await describeTopics(cluster, names(topics));
    expect(described.get(topics.orders)).toEqual({
      partitions: 3,
      replicas: 1,
      maxMessageBytes: String(16 * 1024 * 1024),
    });
    expect(described.get(topics.dlq)?.maxMessageBytes).toBe(String(16 * 1024 * 1024));
    expect(described.get(topics.settlements)).toEqual({ partitions: 3, replicas: 1 });

    const second = await runBinary(['topics', 'create'], env);
    expect(second).toMatchObject({ code: 0, err: '' });
    expect(second.out.trim().split('\n')).toEqual([
      `exists ${topics.orders} (3 partitions, replication factor 1)`,
      `exists ${topics.dlq} (3 partitions, replication factor 1)`,
      `exists ${topics.status} (2 partitions, replication factor 1)`,
      `exists ${topics.settlements} (3 partitions, replication factor 1)`,
    ]);
  }, 180_000);

  it('defaults to 12 partitions and the cluster size, and honours --replication-factor', async () => {
    await built;
    const topics = freshTopics('topics_default');
    const env = environment(cluster, topics, database.url);
    const made = await runBinary(['topics', 'create'], env);
    expect(made.code).toBe(0);
    expect(made.out).toContain(`created ${topics.orders} (12 partitions, replication factor 1)`);

    // One broker cannot hold 3 replicas: Kafka's refusal in one line, exit 1.
    const tooMany = freshTopics('topics_rf');
    const refused = await runBinary(
      ['topics', 'create', '--replication-factor', '3'],
      environment(cluster, tooMany, database.url),
    );
    expect(refused.code).toBe(1);
    expect(refused.out).toBe('');
    expect(refused.err.trim().split('\n')).toHaveLength(1);
    expect(refused.err).toMatch(
      /^payflow-bridge: Kafka \(.*\): could not create topic .*: .*[Rr]eplication.factor/,
    );
  }, 180_000);

  it('reports usage errors with exit code 2', async () => {
    await built;
    const env = environment(cluster, freshTopics('topics_usage'), database.url);
    for (const args of [
      ['topics', 'create', '--partitions', '0'],
      ['topics', 'create', '--partitions', 'many'],
      ['topics', 'create', '--replication-factor', '-1'],
      ['topics', 'create', 'extra'],
    ]) {
      const result = await runBinary(args, env);
      expect({ args, code: result.code, out: result.out }).toEqual({ args, code: 2, out: '' });
      expect(result.err).toMatch(/^payflow-bridge: /);
    }
  }, 180_000);
});
