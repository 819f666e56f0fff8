/**
 * The real Kafka test bed itself: the run's 1-node cluster is up and serves topics named per
 * file; and the launcher keeps its promises on a 3-node cluster of this file's own (the
 * run's shared 3-node cluster belongs to the fault tests, which kill its nodes meanwhile):
 * replication factor 3 with min.insync.replicas 2 survives a SIGKILLed node, the node comes
 * back on restart, and stop() leaves no JVM and no folder behind.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { KraftCluster, processAlive } from '../../testbed/kafka/kraft-cluster.js';
import { createTopicSet, testKafkaCluster, topicSetFor } from '../support/kafka-test-bed.js';

async function roundTrip(kafka: Kafka, topic: string): Promise<string> {
  const producer = kafka.producer({ idempotent: true, allowAutoTopicCreation: false });
  await producer.connect();
  const value = randomUUID();
  await producer.send({ topic, acks: -1, messages: [{ key: 'k', value }] });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `bed-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const received = await new Promise<string>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        const text = message.value?.toString() ?? '';
        if (text === value) resolve(text);
        await Promise.resolve();
      },
    });
  });
  await consumer.disconnect();
  return received === value ? value : `unexpected ${received}`;
}

/** Polls `probe` until it returns a value (a broker may not know a new topic yet). */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`nothing after ${timeoutMs} ms`);
    await delay(200);
  }
}

/** Replicas of each partition, as every broker of `kafka` answers it. */
async function replicasOf(kafka: Kafka, topic: string): Promise<number[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await eventually(async () => {
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      return (metadata.topics[0]?.partitions ?? []).map((partition) => partition.replicas.length);
    });
  } finally {
    await admin.disconnect();
  }
}

describe('Kafka test bed (real KRaft clusters)', () => {
  it("the run's 1-node cluster: its broker registered, topics per file, a round trip", async () => {
    const cluster = testKafkaCluster(1);
    expect(cluster.nodes).toHaveLength(1);
    expect(await cluster.registeredBrokers(1)).toEqual([1]);

    const topics = topicSetFor('bed1');
    await createTopicSet(cluster, topics, { partitions: 3 });
    const kafka = new Kafka({
      clientId: 'bed',
      brokers: cluster.brokers,
      logLevel: logLevel.NOTHING,
    });
    expect(await replicasOf(kafka, topics.orders)).toEqual([1, 1, 1]);
    expect(await roundTrip(kafka, topics.orders)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a 3-node cluster: RF 3 survives a killed node, which restarts; stop leaves nothing', async () => {
    const cluster = await KraftCluster.start({ nodes: 3 });
    const root = dirname(cluster.descriptorPath);
    try {
      expect(cluster.figures.rssMb).toHaveLength(3);
      // On a loaded machine (CI starts secured clusters and a private Postgres beside this)
      // a node's heartbeat can be late just after start, and it is fenced for a moment:
      // every node must be listed again, as start() promised, within a minute.
      await cluster.waitReady([1, 2, 3], 60_000);
      expect(await cluster.registeredBrokers(1)).toEqual([1, 2, 3]);
      const topics = topicSetFor('bed3');
      await createTopicSet(cluster, topics, { partitions: 3 });
      const kafka = new Kafka({
        clientId: 'bed3',
        brokers: cluster.brokers,
        logLevel: logLevel.NOTHING,
      });
      expect(await replicasOf(kafka, topics.orders)).toEqual([3, 3, 3]);

      // One node down: once its registration lapses (6 s in the test bed) and its partitions
      // have new leaders, 2 in-sync replicas remain, enough for acks=all.
      const pid = cluster.nodes[1]?.pid ?? -1;
      await cluster.kill(2);
      expect(processAlive(pid)).toBe(false);
      expect(cluster.isRunning(2)).toBe(false);
      await eventually(async () => {
        const brokers = await cluster.registeredBrokers(1);
        return brokers.join(',') === '1,3' ? brokers : undefined;
      });
      const survivors = new Kafka({
        clientId: 'bed3-survivors',
        brokers: cluster.brokers.filter((_, index) => index !== 1),
        logLevel: logLevel.NOTHING,
      });
      // The killed node may still be the group coordinator or a leader for a moment after its
      // registration lapsed (ECONNREFUSED on a loaded machine): the round trip must succeed
      // on the survivors within 40 s.
      expect(await eventually(() => roundTrip(survivors, topics.orders), 40_000)).toMatch(
        /^[0-9a-f-]{36}$/,
      );

      await cluster.restart(2);
      expect(cluster.isRunning(2)).toBe(true);
      expect(
        await eventually(async () => {
          const brokers = await cluster.registeredBrokers(2);
          return brokers.length === 3 ? brokers : undefined;
        }),
      ).toEqual([1, 2, 3]);
      // Another process sees the same nodes through the descriptor file, and what it does
      // (here: node 3 killed and restarted under a new pid) is what stop() acts on.
      const attached = KraftCluster.attach(cluster.descriptorPath);
      expect(attached.nodes.map((node) => node.pid)).toEqual(cluster.nodes.map((node) => node.pid));
      await attached.kill(3);
      await attached.restart(3);
      const restartedPid = attached.nodes[2]?.pid ?? -1;
      expect(processAlive(restartedPid)).toBe(true);
      expect(cluster.isRunning(3)).toBe(true);
      expect(cluster.nodes[2]?.pid).toBe(restartedPid);
    } finally {
      const pids = cluster.nodes.map((node) => node.pid ?? -1);
      await cluster.stop();
      expect(pids.filter((pid) => processAlive(pid))).toEqual([]);
      expect(existsSync(root)).toBe(false);
    }
  }, 120_000);
});
