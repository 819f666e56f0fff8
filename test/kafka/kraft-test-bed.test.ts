/**
 * The real Kafka test bed itself: both clusters of the run are up, topics named per file
 * are created with the cluster's replication factor, and a message goes round trip.
 */
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { createTopicSet, testKafkaCluster, topicSetFor } from '../support/kafka-test-bed.js';

describe('Kafka test bed (real KRaft clusters)', () => {
  it.each([1, 3] as const)(
    '%i-node cluster: every broker registered, topics per file',
    async (nodes) => {
      const cluster = testKafkaCluster(nodes);
      expect(cluster.nodes).toHaveLength(nodes);
      expect(await cluster.registeredBrokers(1)).toEqual(cluster.nodes.map((node) => node.id));

      const topics = topicSetFor(`bed${nodes}`);
      await createTopicSet(cluster, topics, { partitions: 3 });
      const kafka = new Kafka({
        clientId: 'bed',
        brokers: cluster.brokers,
        logLevel: logLevel.NOTHING,
      });
      const admin = kafka.admin();
      await admin.connect();
      const metadata = await admin.fetchTopicMetadata({ topics: [topics.orders] });
      await admin.disconnect();
      const partitions = metadata.topics[0]?.partitions ?? [];
      expect(partitions).toHaveLength(3);
      for (const partition of partitions) expect(partition.replicas).toHaveLength(nodes);

      const producer = kafka.producer({ idempotent: true, allowAutoTopicCreation: false });
      await producer.connect();
      const value = randomUUID();
      await producer.send({ topic: topics.orders, acks: -1, messages: [{ key: 'k', value }] });
      await producer.disconnect();

      const consumer = kafka.consumer({ groupId: `bed-${randomUUID()}`, maxWaitTimeInMs: 100 });
      await consumer.connect();
      await consumer.subscribe({ topic: topics.orders, fromBeginning: true });
      const received = await new Promise<string>((resolve) => {
        void consumer.run({
          eachMessage: async ({ message }) => {
            resolve(message.value?.toString() ?? '');
            await Promise.resolve();
          },
        });
      });
      await consumer.disconnect();
      expect(received).toBe(value);
    },
  );
});
