/**
 * Proves the librdkafka mock cluster (testbed/kafka/mock-cluster.ts) is a usable
 * Kafka for kafkajs: keyed produce, a 2-member consumer group with a real rebalance,
 * offset commits, and producer retries across a broker outage.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Admin, Consumer, Kafka, logLevel, Partitioners, Producer } from 'kafkajs';
import { KafkaMockCluster, mockSafePartitionAssigner } from '../../testbed/kafka/mock-cluster.js';

const TOPIC = 'erp.orders';
const PARTITIONS = 6;
const MESSAGES = 300;
const KEYS = 20;
const GROUP = 'mock-cluster-test';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

interface Received {
  member: number;
  partition: number;
  key: string;
  seq: number;
}

describe('KafkaMockCluster (librdkafka mock) with kafkajs', () => {
  let cluster: KafkaMockCluster;
  let kafka: Kafka;
  let admin: Admin;
  const producers: Producer[] = [];
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    cluster = await KafkaMockCluster.start({
      brokers: 3,
      topics: [{ name: TOPIC, partitions: PARTITIONS }],
    });
    kafka = new Kafka({
      clientId: 'mock-cluster-test',
      brokers: cluster.brokers,
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    admin = kafka.admin();
    await admin.connect();
  });

  afterAll(async () => {
    await Promise.allSettled(consumers.map((c) => c.disconnect()));
    await Promise.allSettled(producers.map((p) => p.disconnect()));
    await admin?.disconnect();
    await cluster?.stop();
  });

  const newProducer = (): Producer => {
    // idempotent: kafkajs sends InitProducerId to the controller, which the mock lacks.
    // allowAutoTopicCreation: documents intent only, the mock auto-creates regardless.
    const p = kafka.producer({
      idempotent: false,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    producers.push(p);
    return p;
  };

  it('exposes brokers and validates topic creation', () => {
    expect(cluster.brokers).toHaveLength(3);
    expect(cluster.bootstrapServers).toBe(cluster.brokers.join(','));
    for (const b of cluster.brokers) expect(b).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(() => cluster.createTopic(TOPIC, 3)).toThrow(/TOPIC_ALREADY_EXISTS/);
    expect(() => cluster.createTopic('bad', -1)).toThrow(/partitions/);
    expect(() => cluster.brokerDown(4)).toThrow(/1\.\.3/);
  });

  it('delivers every keyed message exactly once, in key order, across a 2-member group', async () => {
    const received: Received[] = [];
    const assignments: number[][] = [[], []];

    // Both members join concurrently so they land in the mock's initial 3 s join window
    // (a later join costs sessionTimeout - 1000 ms). Short session/heartbeat keep any
    // rebalance quick; short maxWaitTime makes disconnect() fast (no 5 s fetch long-poll);
    // the mock-safe assigner avoids the mock's SyncGroup race (see its doc comment).
    const members = [0, 1].map((member) => {
      const consumer = kafka.consumer({
        groupId: GROUP,
        sessionTimeout: 6000,
        heartbeatInterval: 500,
        maxWaitTimeInMs: 100,
        partitionAssigners: [mockSafePartitionAssigner()],
      });
      consumers.push(consumer);
      consumer.on(consumer.events.GROUP_JOIN, (e) => {
        assignments[member] = [...(e.payload.memberAssignment[TOPIC] ?? [])].sort((a, b) => a - b);
      });
      return { member, consumer };
    });

    await Promise.all(
      members.map(async ({ member, consumer }) => {
        await consumer.connect();
        await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
        await consumer.run({
          eachMessage: ({ partition, message }) => {
            const key = message.key?.toString() ?? '';
            const seq = Number(message.value?.toString());
            received.push({ member, partition, key, seq });
            return Promise.resolve();
          },
        });
      }),
    );

    // Produce only once the group is stable, so no partition is handed over mid-stream
    // (which would legitimately redeliver uncommitted messages).
    await waitFor(
      'both members to own disjoint halves of the topic',
      () => {
        const [a = [], b = []] = assignments;
        const all = [...a, ...b].sort((x, y) => x - y);
        return a.length > 0 && b.length > 0 && all.join() === [...Array(PARTITIONS).keys()].join();
      },
      20_000,
    );

    const producer = newProducer();
    await producer.connect();
    const messages = Array.from({ length: MESSAGES }, (_, seq) => ({
      key: `order-${seq % KEYS}`,
      value: String(seq),
    }));
    for (let i = 0; i < messages.length; i += 50) {
      await producer.send({ topic: TOPIC, messages: messages.slice(i, i + 50) });
    }

    await waitFor(`${MESSAGES} messages`, () => received.length >= MESSAGES, 20_000);
    await sleep(500); // grace period: any duplicate would show up now

    // Exactly once.
    expect(received).toHaveLength(MESSAGES);
    expect(new Set(received.map((r) => r.seq)).size).toBe(MESSAGES);

    // Both members consumed, each only from its own partitions.
    for (const member of [0, 1]) {
      const mine = received.filter((r) => r.member === member);
      expect(mine.length).toBeGreaterThan(0);
      for (const r of mine) expect(assignments[member]).toContain(r.partition);
    }

    // Per-key order preserved, and one key never spans partitions.
    const byKey = new Map<string, Received[]>();
    for (const r of received) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
    expect(byKey.size).toBe(KEYS);
    for (const rs of byKey.values()) {
      expect(new Set(rs.map((r) => r.partition)).size).toBe(1);
      const seqs = rs.map((r) => r.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }

    // Committed offsets (OffsetFetch works on the mock) reach each partition's end.
    const ends = new Map(
      (await admin.fetchTopicOffsets(TOPIC)).map((p) => [p.partition, Number(p.high)]),
    );
    expect([...ends.values()].reduce((a, b) => a + b, 0)).toBe(MESSAGES);
    await waitFor(
      'committed offsets to cover every message',
      async () => {
        const [committed] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
        return (committed?.partitions ?? []).every(
          (p) => Number(p.offset) === ends.get(p.partition),
        );
      },
      10_000,
    );

    await Promise.all(consumers.map((c) => c.disconnect()));
  });

  it('producer delivers to a partition whose leader went down, once it is back up', async () => {
    const topic = 'erp.orders.retry';
    cluster.createTopic(topic, 3);
    const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
    const leader = meta?.partitions.find((p) => p.partitionId === 0)?.leader;
    if (leader === undefined) throw new Error('no leader for partition 0');

    const producer = newProducer();
    await producer.connect();
    await producer.send({ topic, messages: [{ partition: 0, value: 'before' }] });

    // No controller in the mock: the leader does not fail over, the send must retry.
    cluster.brokerDown(leader);
    let settled = false;
    // Never rejects, so an early failure cannot become an unhandled rejection mid-sleep.
    const outcome = producer
      .send({ topic, messages: [{ partition: 0, value: 'during-outage' }] })
      .then(
        (metadata) => ({ metadata, error: undefined }),
        (error: unknown) => ({ metadata: undefined, error }),
      );
    void outcome.then(() => {
      settled = true;
    });
    await sleep(1500);
    expect(settled).toBe(false); // still retrying, not failed fast
    cluster.brokerUp(leader);

    const { metadata, error } = await outcome;
    expect(error).toBeUndefined();
    expect(metadata?.[0]).toMatchObject({
      topicName: topic,
      partition: 0,
      errorCode: 0,
      baseOffset: '1',
    });

    const offsets = await admin.fetchTopicOffsets(topic);
    expect(offsets.find((p) => p.partition === 0)?.high).toBe('2');
  });
});
