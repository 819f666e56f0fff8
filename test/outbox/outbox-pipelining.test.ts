/**
 * The relay's pipelining (issue 30 §3) against real Postgres and real Kafka: several passes
 * in flight at once, and each key's rows still leave in order, exactly once, when a send
 * fails while later passes are in flight (a failed send keeps its rows pending, and no
 * later row of those keys overtakes them; the retry neither doubles nor reorders them).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Kafka } from 'kafkajs';
import type { DataSource } from 'typeorm';
import { Database, type Sql } from '../../src/database/database.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { MessageProducer, OutboundMessage } from '../../src/messaging/messaging.ports.js';
import { OutboxRepository } from '../../src/outbox/outbox.repository.js';
import { OutboxRelay } from '../../src/outbox/outbox.relay.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  createTopics,
  deleteTopics,
  testKafkaCluster,
  topicNamesFor,
} from '../support/kafka-test-bed.js';
import {
  KafkajsTestProducer,
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

const TOPICS = topicNamesFor('pipelining', ['status', 'other', 'overtake']);

const KEYS = 24;
/** Keys k with k % GROUPS = w % GROUPS get a row in wave w: waves in a row share no key. */
const GROUPS = 3;
const WAVES = 18;
/** Rows per key. */
const PER_KEY = WAVES / GROUPS;
/**
 * The relay's Database with a slow commit (each transaction waits `commitDelayMs` after
 * its work, before COMMIT), so that a pass is still open when the next one claims and
 * sends: pipelining made visible. Counts the transactions open right now.
 */
class SlowCommitDatabase extends Database {
  open = 0;

  constructor(
    dataSource: DataSource,
    private readonly commitDelayMs: number,
  ) {
    super(dataSource);
  }

  override async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    this.open += 1;
    try {
      return await super.transaction(async (tx) => {
        const result = await work(tx);
        await sleep(this.commitDelayMs);
        return result;
      });
    } finally {
      this.open -= 1;
    }
  }
}

/** The keys whose first sends fail. */
const FAILING = new Set(['P-0', 'P-1', 'P-2']);

/**
 * A slow broker (each send takes `delayMs` before it reaches Kafka, so that passes
 * overlap) that refuses, before anything reaches Kafka, the first `failures` sends holding
 * a row of a FAILING key. Records how many sends were in flight at once and, per key, the
 * sequence numbers of the rows whose send failed.
 */
class PipelineProbe implements MessageProducer {
  inFlight = 0;
  maxInFlight = 0;
  /** The most relay transactions open when a send began (2 or more: passes overlapped). */
  maxOpenAtSend = 0;
  database: SlowCommitDatabase | undefined;
  failed = 0;
  readonly refused = new Map<string, number[]>();
  /** Per key, the sequence numbers Kafka acknowledged, in the order the sends ended. */
  readonly acknowledged = new Map<string, number[]>();

  constructor(
    private readonly inner: MessageProducer,
    private failures: number,
    private readonly delayMs: number,
  ) {}

  connect(): Promise<void> {
    return this.inner.connect();
  }

  disconnect(): Promise<void> {
    return this.inner.disconnect();
  }

  async send(messages: readonly OutboundMessage[]): Promise<void> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.maxOpenAtSend = Math.max(this.maxOpenAtSend, this.database?.open ?? 0);
    try {
      await sleep(this.delayMs);
      const failing = messages.filter((message) => FAILING.has(String(message.key)));
      if (failing.length > 0 && this.failures > 0) {
        this.failures -= 1;
        this.failed += 1;
        for (const message of failing) {
          const key = String(message.key);
          this.refused.set(key, [...(this.refused.get(key) ?? []), seqOf(message)]);
        }
        throw new Error('broker refused the send (test double)');
      }
      await this.inner.send(messages);
      for (const message of messages) {
        const key = String(message.key);
        this.acknowledged.set(key, [...(this.acknowledged.get(key) ?? []), seqOf(message)]);
      }
    } finally {
      this.inFlight -= 1;
    }
  }
}

function seqOf(message: { readonly value: Buffer | string }): number {
  return (JSON.parse(message.value.toString()) as { seq: number }).seq;
}

function wave(topic: string, w: number): OutboundMessage[] {
  const seq = Math.floor(w / GROUPS);
  return Array.from({ length: KEYS }, (_, k) => k)
    .filter((k) => k % GROUPS === w % GROUPS)
    .map((k) => ({ topic, key: `P-${k}`, value: JSON.stringify({ key: `P-${k}`, seq }) }));
}

/** Every key's sequence numbers exactly once and ascending. */
function expectInOrderOnce(received: readonly Received[]): void {
  expect(received).toHaveLength(KEYS * PER_KEY);
  const byKey = new Map<string, number[]>();
  for (const message of received) {
    const key = String(message.key);
    byKey.set(key, [...(byKey.get(key) ?? []), seqOf(message)]);
  }
  expect(byKey.size).toBe(KEYS);
  for (const [key, seqs] of byKey) {
    expect({ key, seqs }).toEqual({ key, seqs: Array.from({ length: PER_KEY }, (_, i) => i) });
  }
}

describe('OutboxRelay pipelining (Postgres + Kafka)', () => {
  const cluster = testKafkaCluster(1);
  let testDb: TestDatabase;
  let db: OpenDatabase;
  let kafka: Kafka;
  let kafkaProducer: KafkajsTestProducer;
  let collector: TopicCollector;
  const relays: OutboxRelay[] = [];

  const newRelay = (probe: PipelineProbe, commitDelayMs = 30): OutboxRelay => {
    const database = new SlowCommitDatabase(db.dataSource, commitDelayMs);
    probe.database = database;
    const relay = new OutboxRelay(
      database,
      probe,
      new OutboxRepository(),
      {
        pipelineDepth: 4,
        busyPollMs: 10,
        idlePollMs: 200,
        rebalanceIntervalMs: 150,
        retryInitialMs: 60,
        retryMaxMs: 200,
        stopTimeoutMs: 5_000,
      },
      undefined,
      silentLogger(),
    );
    relays.push(relay);
    return relay;
  };

  beforeAll(async () => {
    [testDb] = await Promise.all([
      createTestDatabase('outbox_pipelining'),
      createTopics(cluster, Object.values(TOPICS), 6),
    ]);
    db = await openDatabase(testDb.url, 20);
    kafka = testKafka(cluster.brokers);
    kafkaProducer = new KafkajsTestProducer(kafka);
    await kafkaProducer.connect();
    collector = await TopicCollector.start(kafka, Object.values(TOPICS));
  });

  afterEach(async () => {
    await Promise.allSettled(relays.map((relay) => relay.stop()));
  });

  afterAll(async () => {
    await Promise.allSettled(relays.map((relay) => relay.stop()));
    await collector?.stop();
    await kafkaProducer?.disconnect();
    await db?.close();
    await testDb?.drop();
    await deleteTopics(cluster, Object.values(TOPICS));
  });

  it.each([
    ['one relay', 1],
    ['two relays sharing the buckets', 2],
  ] as const)(
    'keeps each key in order, exactly once, when sends fail while later passes are in flight (%s)',
    async (_case, relayCount) => {
      const topic = relayCount === 1 ? TOPICS.status : TOPICS.other;
      const probe = new PipelineProbe(kafkaProducer, 3, 60);
      const started = Array.from({ length: relayCount }, () => newRelay(probe));
      await Promise.all(started.map((relay) => relay.start()));

      // A wave every 10 ms while each send takes 60 ms: passes overlap.
      for (let w = 0; w < WAVES; w++) {
        await writeOutbox(db.database, wave(topic, w));
        for (const relay of started) relay.notify();
        await sleep(10);
      }
      await waitFor('everything published', async () => (await pendingCount(db.database)) === 0);
      await waitFor('read back', () => collector.of(topic).length >= KEYS * PER_KEY);
      await sleep(300);

      // Pipelined: sends overlapped; and sends failed, with rows of the failing keys in them.
      expect(probe.maxOpenAtSend).toBeGreaterThanOrEqual(2);
      expect(probe.failed).toBe(3);
      expect([...probe.refused.keys()].some((key) => FAILING.has(key))).toBe(true);
      // Nothing doubled, nothing overtaken: the refused rows went out later, in their place,
      // as the relay handed them to Kafka and as a consumer reads them.
      for (let k = 0; k < KEYS; k++) {
        expect(probe.acknowledged.get(`P-${k}`)).toEqual(
          Array.from({ length: PER_KEY }, (_, i) => i),
        );
      }
      expectInOrderOnce(collector.of(topic));
      await Promise.all(started.map((relay) => relay.stop()));
    },
  );

  it('a later row of a key whose send is failing does not overtake it in a pass beside it', async () => {
    // Step by step: P-0's first row is in a slow send that will fail; its second row is
    // written meanwhile and a second pass starts beside the first, claiming when that send
    // is over but before its pass has ended (its rows still locked). That pass must leave
    // P-0's row (held) while sending the other key's; then both P-0 rows go out, in order.
    const topic = TOPICS.overtake;
    const probe = new PipelineProbe(kafkaProducer, 1, 300);
    // The failed pass commits 300 ms after its send failed: the next pass claims meanwhile.
    const relay = newRelay(probe, 300);
    await relay.start();
    const row = (key: string, seq: number): OutboundMessage => ({
      topic,
      key,
      value: JSON.stringify({ key, seq }),
    });
    await writeOutbox(db.database, [row('P-0', 0)]);
    relay.notify();
    await waitFor('the first send in flight', () => probe.inFlight === 1);
    await writeOutbox(db.database, [row('P-0', 1), row('Q-0', 0)]);
    relay.notify();
    await waitFor('published', async () => (await pendingCount(db.database)) === 0);
    await waitFor('read back', () => collector.of(topic).length >= 3);
    await sleep(300);

    expect(probe.failed).toBe(1);
    expect(probe.maxOpenAtSend).toBeGreaterThanOrEqual(2);
    expect(probe.refused.get('P-0')).toEqual([0]);
    expect(probe.acknowledged.get('P-0')).toEqual([0, 1]);
    expect(probe.acknowledged.get('Q-0')).toEqual([0]);
    expect(
      collector
        .of(topic)
        .filter((message) => message.key === 'P-0')
        .map(seqOf),
    ).toEqual([0, 1]);
    await relay.stop();
  });

  it('a pass leaves a key that another pass in flight holds, and publishes it after that one', async () => {
    // One key written in many transactions while its earlier rows are still being sent and
    // committed: later passes find its newer rows but must not send them beside the older.
    const probe = new PipelineProbe(kafkaProducer, 0, 60);
    const relay = newRelay(probe, 60);
    await relay.start();
    const topic = TOPICS.status;
    const before = collector.of(topic).length;
    for (let seq = 0; seq < 20; seq++) {
      await writeOutbox(db.database, [
        { topic, key: 'HOT', value: JSON.stringify({ key: 'HOT', seq }) },
      ]);
      relay.notify();
      await sleep(5);
    }
    await waitFor('published', async () => (await pendingCount(db.database)) === 0);
    await waitFor('read back', () => collector.of(topic).length >= before + 20);
    await sleep(300);
    const seqs = collector
      .of(topic)
      .filter((message) => message.key === 'HOT')
      .map(seqOf);
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(probe.acknowledged.get('HOT')).toEqual(seqs);
    // The key never had two sends in flight: its rows went out one send at a time.
    expect(probe.maxInFlight).toBe(1);
    await relay.stop();
  });
});
