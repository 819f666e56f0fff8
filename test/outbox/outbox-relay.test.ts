/**
 * The outbox relay against real Postgres (one database per file) and real Kafka (the run's
 * 1-node cluster, topics of this file) with real kafkajs: order per key, topics and
 * headers, two relays sharing the buckets without publishing a row twice, take-over when a
 * relay stops or loses its lock connection, producer and broker failures, flush, prune,
 * metrics.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Kafka } from 'kafkajs';
import pg from 'pg';
import { silentLogger } from '../../src/logging/logger.js';
import type { MessageProducer, OutboundMessage } from '../../src/messaging/messaging.ports.js';
import { OUTBOX_BUCKETS, OutboxRepository } from '../../src/outbox/outbox.repository.js';
import {
  OUTBOX_NOTIFY_CHANNEL,
  OutboxRelay,
  type OutboxRelayMetrics,
  type OutboxRelayOptions,
} from '../../src/outbox/outbox.relay.js';
import { RELAY_LOCK_NAMESPACE } from '../../src/outbox/relay-locks.repository.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  createTopics,
  deleteTopics,
  testKafkaCluster,
  topicNamesFor,
} from '../support/kafka-test-bed.js';
import {
  BrokerOutage,
  KafkajsTestProducer,
  SwitchableProducer,
  TopicCollector,
  openDatabase,
  pendingCount,
  sleep,
  testKafka,
  waitFor,
  writeOutbox,
  type OpenDatabase,
  type Received,
} from './outbox-test-kit.js';

const TOPICS = topicNamesFor('relay', [
  'order-a',
  'order-b',
  'shared',
  'takeover',
  'failing',
  'broker-down-idempotent',
  'broker-down-plain',
  'flush',
  'duplicate',
  'lock-loss',
  'notify',
  'prune',
]);
const OUTAGE_TOPICS = [TOPICS['broker-down-idempotent'], TOPICS['broker-down-plain']];

const FAST: OutboxRelayOptions = {
  busyPollMs: 10,
  idlePollMs: 100,
  rebalanceIntervalMs: 150,
  retryInitialMs: 50,
  retryMaxMs: 300,
  stopTimeoutMs: 5_000,
};

interface Payload {
  key: string;
  seq: number;
}

function messagesFor(topic: string, keys: number, perKey: number, prefix = 'K'): OutboundMessage[] {
  const messages: OutboundMessage[] = [];
  for (let seq = 0; seq < perKey; seq++) {
    for (let k = 0; k < keys; k++) {
      const key = `${prefix}-${k}`;
      messages.push({
        topic,
        key,
        value: JSON.stringify({ key, seq } satisfies Payload),
        headers: { 'x-seq': String(seq), 'content-type': 'application/json' },
      });
    }
  }
  return messages;
}

function parse(received: Received): Payload {
  return JSON.parse(received.value) as Payload;
}

/** Every (key, seq) exactly once, and per key in ascending seq. */
function expectExactlyOnceInOrder(received: Received[], keys: number, perKey: number): void {
  expect(received).toHaveLength(keys * perKey);
  const byKey = new Map<string, number[]>();
  for (const message of received) {
    const payload = parse(message);
    expect(message.key).toBe(payload.key);
    const seqs = byKey.get(payload.key) ?? [];
    seqs.push(payload.seq);
    byKey.set(payload.key, seqs);
  }
  expect(byKey.size).toBe(keys);
  for (const seqs of byKey.values()) {
    expect(seqs).toEqual(Array.from({ length: perKey }, (_, i) => i));
  }
}

describe('OutboxRelay (Postgres + Kafka)', () => {
  const cluster = testKafkaCluster(1);
  let testDb: TestDatabase;
  let db: OpenDatabase;
  let kafka: Kafka;
  let kafkaProducer: KafkajsTestProducer;
  let collector: TopicCollector;
  const relays: OutboxRelay[] = [];
  const extraProducers: MessageProducer[] = [];

  const newRelay = (
    producer: MessageProducer = kafkaProducer,
    options: OutboxRelayOptions = {},
    metrics?: OutboxRelayMetrics,
  ): OutboxRelay => {
    const relay = new OutboxRelay(
      db.database,
      producer,
      new OutboxRepository(),
      { ...FAST, ...options },
      metrics,
      silentLogger(),
    );
    relays.push(relay);
    return relay;
  };

  beforeAll(async () => {
    [testDb] = await Promise.all([
      createTestDatabase('outbox_relay'),
      createTopics(cluster, Object.values(TOPICS), 6),
    ]);
    db = await openDatabase(testDb.url, 20);
    kafka = testKafka(cluster.brokers);
    kafkaProducer = new KafkajsTestProducer(kafka);
    await kafkaProducer.connect();
    collector = await TopicCollector.start(
      kafka,
      Object.values(TOPICS).filter((topic) => !OUTAGE_TOPICS.includes(topic)),
    );
  });

  // A failed test must not leave relays running into the next one.
  afterEach(async () => {
    await Promise.allSettled(relays.map((relay) => relay.stop()));
  });

  afterAll(async () => {
    await Promise.allSettled(relays.map((relay) => relay.stop()));
    await collector?.stop();
    await Promise.allSettled(extraProducers.map((producer) => producer.disconnect()));
    await kafkaProducer?.disconnect();
    await db?.close();
    await testDb?.drop();
    await deleteTopics(cluster, Object.values(TOPICS));
  });

  it('publishes rows in id order per key, to their topic, with their headers, and marks them', async () => {
    const published: number[] = [];
    const owned: number[] = [];
    const relay = newRelay(
      kafkaProducer,
      {},
      {
        published: (count) => published.push(count),
        bucketsOwned: (count) => owned.push(count),
      },
    );
    await relay.start();
    expect(relay.ownedBuckets()).toHaveLength(OUTBOX_BUCKETS);

    const a = messagesFor(TOPICS['order-a'], 5, 8, 'A');
    const b = messagesFor(TOPICS['order-b'], 3, 4, 'B');
    await writeOutbox(db.database, a.slice(0, 20));
    await writeOutbox(db.database, b);
    await writeOutbox(db.database, a.slice(20));
    relay.notify();

    await waitFor('everything published', async () => (await pendingCount(db.database)) === 0);
    await waitFor('collector', () => collector.of(TOPICS['order-a']).length >= 40);
    await waitFor('collector', () => collector.of(TOPICS['order-b']).length >= 12);
    expectExactlyOnceInOrder(collector.of(TOPICS['order-a']), 5, 8);
    expectExactlyOnceInOrder(collector.of(TOPICS['order-b']), 3, 4);
    for (const message of collector.of(TOPICS['order-a'])) {
      expect(message.headers).toEqual({
        'x-seq': String(parse(message).seq),
        'content-type': 'application/json',
      });
    }
    const [marks] = await db.database.sql.query<{ unmarked: number }>(
      'SELECT count(*) FILTER (WHERE published_at IS NULL)::int AS unmarked FROM outbox',
    );
    expect(marks?.unmarked).toBe(0);
    expect(published.reduce((sum, n) => sum + n, 0)).toBe(52);
    expect(owned).toContain(OUTBOX_BUCKETS);

    await relay.stop();
    await relay.stop(); // idempotent
    expect(relay.ownedBuckets()).toEqual([]);
  });

  it('two relays share the buckets and publish 2,000 rows of 100 keys exactly once, in order per key', async () => {
    const one = newRelay();
    const two = newRelay();
    await Promise.all([one.start(), two.start()]);
    await waitFor(
      'the buckets to be shared',
      () =>
        one.ownedBuckets().length === OUTBOX_BUCKETS / 2 &&
        two.ownedBuckets().length === OUTBOX_BUCKETS / 2,
    );
    const all = [...one.ownedBuckets(), ...two.ownedBuckets()].sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: OUTBOX_BUCKETS }, (_, b) => b));

    // 100 keys × 20 events, written in 200 small transactions while both relays run,
    // each commit followed by notify() as the handlers of two replicas would.
    const messages = messagesFor(TOPICS.shared, 100, 20, 'S');
    for (let i = 0; i < messages.length; i += 10) {
      await writeOutbox(db.database, messages.slice(i, i + 10));
      (i % 20 === 0 ? one : two).notify();
    }

    await waitFor('all published', async () => (await pendingCount(db.database)) === 0, 30_000);
    await waitFor('collector', () => collector.of(TOPICS.shared).length >= 2000, 30_000);
    await sleep(300); // a duplicate, if any, would arrive now
    expectExactlyOnceInOrder(collector.of(TOPICS.shared), 100, 20);
    // Each key leaves from a single partition, so its order is Kafka's order too.
    const partitions = new Map<string, Set<number>>();
    for (const message of collector.of(TOPICS.shared)) {
      const set = partitions.get(message.key ?? '') ?? new Set<number>();
      set.add(message.partition);
      partitions.set(message.key ?? '', set);
    }
    for (const set of partitions.values()) expect(set.size).toBe(1);

    // A relay that stops gives its buckets back; the other takes them over.
    await one.stop();
    expect(one.ownedBuckets()).toEqual([]);
    await waitFor('take-over', () => two.ownedBuckets().length === OUTBOX_BUCKETS, 5_000);
    await writeOutbox(db.database, messagesFor(TOPICS.takeover, 10, 10, 'T'));
    two.notify();
    await waitFor('take-over published', () => collector.of(TOPICS.takeover).length >= 100);
    // The broker acknowledges before the relay commits "published": wait for the commit.
    await waitFor('take-over marked', async () => (await pendingCount(db.database)) === 0);
    expectExactlyOnceInOrder(collector.of(TOPICS.takeover), 10, 10);

    // And when it comes back, they share again.
    await one.start();
    await waitFor(
      'sharing again',
      () =>
        one.ownedBuckets().length === OUTBOX_BUCKETS / 2 &&
        two.ownedBuckets().length === OUTBOX_BUCKETS / 2,
      5_000,
    );
    await Promise.all([one.stop(), two.stop()]);
  });

  it('keeps rows pending while the producer fails and publishes them, in order, after recovery', async () => {
    const producer = new SwitchableProducer(kafkaProducer);
    producer.failing = true;
    const failures: number[] = [];
    const relay = newRelay(producer, {}, { publishFailed: (bucket) => failures.push(bucket) });
    await relay.start();

    await writeOutbox(db.database, messagesFor(TOPICS.failing, 10, 5, 'F'));
    relay.notify();
    await waitFor('a few failed attempts', () => producer.sends >= 5);
    expect(await pendingCount(db.database)).toBe(50);
    expect(failures.length).toBeGreaterThan(0);
    expect(collector.of(TOPICS.failing)).toHaveLength(0);

    producer.failing = false;
    await waitFor('recovered', async () => (await pendingCount(db.database)) === 0, 10_000);
    await waitFor('collector', () => collector.of(TOPICS.failing).length >= 50);
    expectExactlyOnceInOrder(collector.of(TOPICS.failing), 10, 5);
    await relay.stop();
  });

  // The shared cluster must keep running for the other files, so the outage is the
  // relay's: its client loses every connection and is refused new ones (what a cluster
  // that is down looks like from the client), then gets through again. Either producer
  // gives up a send after the client's retries and the relay retries the batch; the
  // idempotent one must then go on with its producer id and sequence numbers unharmed.
  it.each([
    ['idempotent', true, TOPICS['broker-down-idempotent']],
    ['plain', false, TOPICS['broker-down-plain']],
  ] as const)(
    'rides out a broker outage (%s producer): nothing is lost, everything leaves after the brokers return',
    async (_mode, idempotent, topic) => {
      const outage = new BrokerOutage();
      const brokerKafka = testKafka(cluster.brokers, 'outbox-broker-test', outage.socketFactory);
      const producer = new KafkajsTestProducer(brokerKafka, { idempotent });
      extraProducers.push(producer);
      await producer.connect();
      let failed = 0;
      const relay = newRelay(producer, {}, { publishFailed: () => (failed += 1) });
      await relay.start();

      outage.begin();
      try {
        await writeOutbox(db.database, messagesFor(topic, 6, 5, 'B'));
        relay.notify();
        await sleep(2_500);
        expect(await pendingCount(db.database)).toBe(30);
        expect(failed).toBeGreaterThan(0);
      } finally {
        outage.end();
      }
      await waitFor(
        'published after the outage',
        async () => (await pendingCount(db.database)) === 0,
        30_000,
      );
      await relay.stop();

      const reader = await TopicCollector.start(brokerKafka, [topic]);
      try {
        await waitFor('read back', () => reader.of(topic).length >= 30, 20_000);
        await sleep(300);
        expectExactlyOnceInOrder(reader.of(topic), 6, 5);
      } finally {
        await reader.stop();
      }
    },
  );

  it('flush() publishes everything pending without a started relay, and says what is left when it cannot', async () => {
    const producer = new SwitchableProducer(kafkaProducer);
    const relay = newRelay(producer);
    expect(relay.isRunning).toBe(false);

    await writeOutbox(db.database, messagesFor(TOPICS.flush, 4, 3, 'L'));
    const result = await relay.flush(5_000);
    expect(result).toEqual({ drained: true, published: 12, remaining: 0 });
    expect(await pendingCount(db.database)).toBe(0);
    await waitFor('collector', () => collector.of(TOPICS.flush).length >= 12);
    expectExactlyOnceInOrder(collector.of(TOPICS.flush), 4, 3);

    expect(await relay.flush(1_000)).toEqual({ drained: true, published: 0, remaining: 0 });

    producer.failing = true;
    await writeOutbox(db.database, messagesFor(TOPICS.flush, 2, 1, 'M'));
    const stuck = await relay.flush(300);
    expect(stuck).toEqual({ drained: false, published: 0, remaining: 2 });
    producer.failing = false;
    expect((await relay.flush(5_000)).drained).toBe(true);
  });

  it('is at least once around a lost acknowledgement: the batch is sent again, consumers dedupe', async () => {
    const producer = new SwitchableProducer(kafkaProducer);
    producer.failAfterSend = true;
    const relay = newRelay(producer);
    await writeOutbox(db.database, messagesFor(TOPICS.duplicate, 2, 2, 'D'));

    expect((await relay.flush(200)).drained).toBe(false);
    expect(await pendingCount(db.database)).toBe(4);
    producer.failAfterSend = false;
    expect((await relay.flush(5_000)).drained).toBe(true);

    await waitFor('collector', () => collector.of(TOPICS.duplicate).length >= 8);
    const received = collector.of(TOPICS.duplicate);
    // Each key's sequence arrives whole at least twice, never reordered within a delivery.
    for (const key of ['D-0', 'D-1']) {
      const seqs = received.filter((m) => m.key === key).map((m) => parse(m).seq);
      expect(seqs.length).toBeGreaterThanOrEqual(4);
      expect(seqs.slice(-2)).toEqual([0, 1]);
    }
  });

  it('gives up its buckets when its lock connection dies and claims them again', async () => {
    const one = newRelay();
    const two = newRelay();
    await Promise.all([one.start(), two.start()]);
    await waitFor(
      'the buckets to be shared',
      () => one.ownedBuckets().length === 8 && two.ownedBuckets().length === 8,
    );

    // Kill one relay's lock session, as a network failure or a DBA would.
    const admin = new pg.Client({ connectionString: testDb.url });
    await admin.connect();
    const ownerPids = async (): Promise<number[]> =>
      (
        await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
              AND classid = $1::int::oid
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          [RELAY_LOCK_NAMESPACE.BUCKET_OWNER],
        )
      ).rows.map((row) => row.pid);
    try {
      const before = new Set(one.ownedBuckets());
      const [victim] = (
        await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
              AND classid = $1::int::oid AND objid = $2::int::oid
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          [RELAY_LOCK_NAMESPACE.BUCKET_OWNER, [...before][0]],
        )
      ).rows;
      expect(victim).toBeDefined();
      await admin.query('SELECT pg_terminate_backend($1)', [victim?.pid]);
      // The relay notices and claims its share again on a new lock connection (with
      // pipelined passes it may do so within a few ms, faster than a poll of ownedBuckets).
      await waitFor(
        'the buckets to be shared again, on live lock connections',
        async () => {
          const pids = await ownerPids();
          return (
            pids.length === OUTBOX_BUCKETS &&
            !pids.includes(victim?.pid ?? -1) &&
            new Set(pids).size === 2 &&
            one.ownedBuckets().length === 8 &&
            two.ownedBuckets().length === 8
          );
        },
        10_000,
      );
    } finally {
      await admin.end();
    }

    await writeOutbox(db.database, messagesFor(TOPICS['lock-loss'], 20, 5, 'X'));
    one.notify();
    two.notify();
    await waitFor('published', () => collector.of(TOPICS['lock-loss']).length >= 100);
    await sleep(300);
    expectExactlyOnceInOrder(collector.of(TOPICS['lock-loss']), 20, 5);
    await Promise.all([one.stop(), two.stop()]);
  });

  it('wakes the other replicas through Postgres NOTIFY, and is woken by theirs', async () => {
    const listener = new pg.Client({ connectionString: testDb.url });
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on('notification', (message) => heard.push(message.channel));
      await listener.query(`LISTEN ${OUTBOX_NOTIFY_CHANNEL}`);

      // Long pauses: only a wake-up makes this relay look at its buckets again.
      const relay = newRelay(kafkaProducer, { idlePollMs: 60_000, rebalanceIntervalMs: 60_000 });
      await relay.start();
      await sleep(100);
      await writeOutbox(db.database, messagesFor(TOPICS.notify, 5, 2, 'N'));
      expect(await pendingCount(db.database)).toBe(10);

      // Another replica's notify() arrives as a NOTIFY on this relay's lock connection.
      await listener.query('SELECT pg_notify($1, $2)', [OUTBOX_NOTIFY_CHANNEL, '']);
      await waitFor(
        'published after the NOTIFY',
        async () => (await pendingCount(db.database)) === 0,
        3_000,
      );

      // And this relay's notify() tells the others (throttled: a burst sends at most two).
      heard.length = 0;
      for (let i = 0; i < 50; i++) relay.notify();
      await waitFor('a NOTIFY', () => heard.length > 0, 3_000);
      await sleep(100);
      expect(heard.length).toBeLessThanOrEqual(2);
      await relay.stop();
    } finally {
      await listener.end();
    }
  });

  it('prunes published rows older than 7 days and reports pending rows to the metrics hook', async () => {
    await db.database.sql.execute('DELETE FROM outbox');
    await writeOutbox(db.database, messagesFor(TOPICS.prune, 1, 6, 'P'));
    await db.database.sql.execute(
      `UPDATE outbox SET published_at = now() - interval '8 days'
        WHERE id IN (SELECT id FROM outbox ORDER BY id LIMIT 3)`,
    );
    await db.database.sql.execute(
      `UPDATE outbox SET published_at = now() - interval '6 days', created_at = now() - interval '6 days'
        WHERE id IN (SELECT id FROM outbox ORDER BY id OFFSET 3 LIMIT 1)`,
    );
    await db.database.sql.execute(
      `UPDATE outbox SET created_at = now() - interval '90 seconds' WHERE published_at IS NULL`,
    );
    const samples: { count: number; age: number | null }[] = [];
    const relay = newRelay(
      new SwitchableProducer(kafkaProducer),
      {},
      {
        pending: (count, age) => samples.push({ count, age }),
      },
    );
    expect(await relay.prune()).toBe(3);
    const [left] = await db.database.sql.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM outbox',
    );
    expect(left?.count).toBe(3);

    const stats = await relay.pendingStats();
    expect(stats.count).toBe(2);
    expect(stats.oldestAgeSeconds).toBeGreaterThanOrEqual(89);

    // The running relay samples the same figures for its metrics hook.
    const producer = new SwitchableProducer(kafkaProducer);
    producer.failing = true;
    const sampling = newRelay(
      producer,
      { metricsIntervalMs: 50 },
      {
        pending: (count, age) => samples.push({ count, age }),
      },
    );
    await sampling.start();
    await waitFor('a metrics sample', () => samples.length > 0);
    expect(samples[0]?.count).toBe(2);
    await sampling.stop();
  });
});
