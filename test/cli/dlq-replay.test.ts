/**
 * The replay use case behind `dlq replay` (DeadLetterReplayService) against real Postgres
 * and real Kafka (topics of this file), publishing with the worker's kafkajs producer. The command
 * itself (output, exit codes) is exercised compiled, in cli-binary.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Kafka } from 'kafkajs';
import { createCliProducer } from '../../src/cli/cli.producer.js';
import { loadCliConfig } from '../../src/cli/cli.config.js';
import { silentLogger } from '../../src/logging/logger.js';
import { DeadLetterRepository } from '../../src/dead-letters/dead-letter.repository.js';
import {
  DeadLetterReplayService,
  ReplayNotPublishedError,
} from '../../src/dead-letters/replay/dead-letter-replay.service.js';
import type { MessageProducer } from '../../src/messaging/messaging.ports.js';
import { OutboxRelay } from '../../src/outbox/outbox.relay.js';
import { OutboxRepository } from '../../src/outbox/outbox.repository.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  createTopics,
  deleteTopics,
  testKafkaCluster,
  topicNamesFor,
} from '../support/kafka-test-bed.js';
import {
  KafkajsTestProducer,
  SwitchableProducer,
  TopicCollector,
  openDatabase,
  pendingCount,
  sleep,
  testKafka,
  waitFor,
  type OpenDatabase,
} from '../outbox/outbox-test-kit.js';
import { hoursAgo, insertDeadLetter, insertOrder, type SeededLetter } from './cli-test-kit.js';

const TOPICS = topicNamesFor('replay', ['cli', 'filters', 'crash', 'concurrent']);

interface Seeded {
  readonly a: SeededLetter[];
  readonly b: SeededLetter[];
  readonly c: SeededLetter[];
  readonly k: SeededLetter[];
}

interface LetterState {
  id: string;
  replayed: boolean;
}

describe('dlq replay', () => {
  let testDb: TestDatabase;
  let db: OpenDatabase;
  const cluster = testKafkaCluster(1);
  let kafka: Kafka;
  let producer: KafkajsTestProducer;
  let collector: TopicCollector;

  const letterStates = async (): Promise<LetterState[]> =>
    db.database.sql.query<LetterState>(
      'SELECT d.id::text AS id, d.replayed_at IS NOT NULL AS replayed FROM dead_letters d ORDER BY d.id',
    );

  const blocked = async (orderId: string): Promise<boolean> => {
    const [row] = await db.database.sql.query<{ blocked: boolean }>(
      'SELECT blocked_at IS NOT NULL AS blocked FROM orders WHERE order_id = $1',
      [orderId],
    );
    return row?.blocked ?? false;
  };

  const service = (
    topic: string,
    messageProducer: MessageProducer = producer,
    flushTimeoutMs = 10_000,
  ): { service: DeadLetterReplayService; relay: OutboxRelay } => {
    const outbox = new OutboxRepository();
    const relay = new OutboxRelay(
      db.database,
      messageProducer,
      outbox,
      {},
      undefined,
      silentLogger(),
    );
    return {
      relay,
      service: new DeadLetterReplayService(db.database, new DeadLetterRepository(), outbox, relay, {
        topic,
        flushTimeoutMs,
      }),
    };
  };

  /** Order A: a rejected event and two that followed it; B: in doubt; C: replayed long ago. */
  const seed = async (): Promise<Seeded> => {
    const sql = db.database.sql;
    await insertOrder(sql, 'SO-A', { blocked: true });
    await insertOrder(sql, 'SO-B', { blocked: true });
    await insertOrder(sql, 'SO-C');
    const a1 = await insertDeadLetter(sql, {
      orderId: 'SO-A',
      reason: 'rejected_by_payflow',
      failedAt: hoursAgo(72),
      eventType: 'order.payment_requested',
      headers: { 'x-trace-id': 'a1', 'content-type': 'application/json' },
    });
    const b1 = await insertDeadLetter(sql, {
      orderId: 'SO-B',
      reason: 'in_doubt',
      failedAt: hoursAgo(1),
    });
    const a2 = await insertDeadLetter(sql, {
      orderId: 'SO-A',
      reason: 'blocked_by_earlier_failure',
      failedAt: hoursAgo(48),
      eventType: 'order.installment_added',
    });
    const c1 = await insertDeadLetter(sql, {
      orderId: 'SO-C',
      reason: 'mapping_failed',
      failedAt: hoursAgo(400),
      replayedAt: hoursAgo(300),
    });
    const k1 = await insertDeadLetter(sql, {
      orderId: null,
      reason: 'invalid_json',
      failedAt: hoursAgo(2),
      value: '{not json',
    });
    const a3 = await insertDeadLetter(sql, {
      orderId: 'SO-A',
      reason: 'blocked_by_earlier_failure',
      failedAt: hoursAgo(0.5),
      eventType: 'order.cancelled',
    });
    const k2 = await insertDeadLetter(sql, {
      orderId: null,
      reason: 'invalid_json',
      failedAt: hoursAgo(240),
      value: '\u0000\u0001',
    });
    return { a: [a1, a2, a3], b: [b1], c: [c1], k: [k1, k2] };
  };

  beforeAll(async () => {
    [testDb] = await Promise.all([
      createTestDatabase('dlq_replay'),
      createTopics(cluster, Object.values(TOPICS), 4),
    ]);
    db = await openDatabase(testDb.url);
    kafka = testKafka(cluster.brokers, 'dlq-replay-test');
    producer = new KafkajsTestProducer(kafka);
    await producer.connect();
    collector = await TopicCollector.start(kafka, Object.values(TOPICS));
  });

  afterAll(async () => {
    await collector?.stop();
    await producer?.disconnect();
    await db?.close();
    await testDb?.drop();
    await deleteTopics(cluster, Object.values(TOPICS));
  });

  beforeEach(async () => {
    await db.database.sql.execute('TRUNCATE dead_letters, orders, outbox');
  });

  it('selects orders: a matching letter brings all unreplayed letters of its order, in id order', async () => {
    const seeded = await seed();
    const { service: replay } = service(TOPICS.filters);
    const ids = (plan: Awaited<ReturnType<DeadLetterReplayService['plan']>>): (string | null)[][] =>
      plan.groups.map((group) => [group.orderId, ...group.letters.map((letter) => letter.id)]);
    const [a1, a2, a3] = seeded.a.map((letter) => letter.id);
    const [b1] = seeded.b.map((letter) => letter.id);
    const [k1, k2] = seeded.k.map((letter) => letter.id);

    // Everything unreplayed, groups in the order their first letter failed.
    const all = await replay.plan({});
    expect(ids(all)).toEqual([
      ['SO-A', a1, a2, a3],
      ['SO-B', b1],
      [null, k1],
      [null, k2],
    ]);
    expect(all).toMatchObject({ orders: 2, keyless: 2, messages: 6 });
    expect(all.byReason).toEqual({
      rejected_by_payflow: 1,
      blocked_by_earlier_failure: 2,
      in_doubt: 1,
      invalid_json: 2,
    });

    // The reason of A's first letter selects A, with the letters parked behind it.
    expect(ids(await replay.plan({ reason: 'rejected_by_payflow' }))).toEqual([
      ['SO-A', a1, a2, a3],
    ]);
    expect(ids(await replay.plan({ reason: 'in_doubt' }))).toEqual([['SO-B', b1]]);
    // A's newest letter is recent: A qualifies as a whole; the old key-less one does not.
    expect(ids(await replay.plan({ since: hoursAgo(3) }))).toEqual([
      ['SO-A', a1, a2, a3],
      ['SO-B', b1],
      [null, k1],
    ]);
    expect(ids(await replay.plan({ since: hoursAgo(3), reason: 'invalid_json' }))).toEqual([
      [null, k1],
    ]);
    // An order filter never includes key-less letters; replayed letters never come back.
    expect(ids(await replay.plan({ orderId: 'SO-A' }))).toEqual([['SO-A', a1, a2, a3]]);
    expect(ids(await replay.plan({ orderId: 'SO-C' }))).toEqual([]);
    expect(ids(await replay.plan({ reason: 'mapping_failed' }))).toEqual([]);
  });

  it('replays an order whole, in order, with its original key, value and headers; marks and unblocks it', async () => {
    const seeded = await seed();
    const before = await letterStates();
    // The CLI's own producer (src/messaging's kafkajs producer), as `dlq replay` uses it.
    const cliProducer = createCliProducer(
      loadCliConfig({ KAFKA_BROKERS: cluster.bootstrapServers, KAFKA_CLIENT_ID: 'replay-test' }),
      silentLogger(),
    );
    await cliProducer.connect();
    try {
      const progress: string[] = [];
      const result = await service(TOPICS.cli, cliProducer).service.replay(
        { reason: 'rejected_by_payflow' },
        {
          start: (plan) => progress.push(`start ${plan.messages}`),
          advance: (group, messages) => progress.push(`${group.orderId ?? '-'} ${messages}`),
          stop: () => progress.push('stop'),
        },
      );
      expect(result).toMatchObject({ orders: 1, keyless: 0, messages: 3, skipped: 0 });
      expect(result.byReason).toEqual({ rejected_by_payflow: 1, blocked_by_earlier_failure: 2 });
      expect(progress).toEqual(['start 3', 'SO-A 3', 'stop']);
    } finally {
      await cliProducer.disconnect();
    }

    await waitFor('the replayed events', () => collector.of(TOPICS.cli).length >= 3);
    await sleep(200);
    const received = collector.of(TOPICS.cli);
    expect(received).toHaveLength(3);
    expect(received.map((message) => message.value)).toEqual(
      seeded.a.map((letter) => letter.value),
    );
    for (const [index, message] of received.entries()) {
      expect(message.key).toBe('SO-A');
      expect(message.headers).toEqual(seeded.a[index]?.headers);
    }
    expect(new Set(received.map((message) => message.partition)).size).toBe(1);

    const after = await letterStates();
    const replayedIds = new Set(seeded.a.map((letter) => letter.id));
    for (const state of after) {
      const was = before.find((row) => row.id === state.id);
      expect(state.replayed).toBe(replayedIds.has(state.id) ? true : was?.replayed);
    }
    expect(await blocked('SO-A')).toBe(false);
    expect(await blocked('SO-B')).toBe(true);
    expect(await pendingCount(db.database)).toBe(0);
    expect(
      (await service(TOPICS.cli).service.plan({ reason: 'rejected_by_payflow' })).messages,
    ).toBe(0);
  });

  it('replays matching key-less letters one by one, and a plan changes nothing', async () => {
    const seeded = await seed();
    const before = await letterStates();
    const { service: replay } = service(TOPICS.filters);
    await replay.plan({ since: hoursAgo(3) });
    expect(await letterStates()).toEqual(before);

    const result = await replay.replay({ since: hoursAgo(3) });
    expect(result).toMatchObject({ orders: 2, keyless: 1, messages: 5 });
    await waitFor('the replayed events', () => collector.of(TOPICS.filters).length >= 5);
    await sleep(200);
    const received = collector.of(TOPICS.filters);
    // Per key in order (different keys travel on different partitions).
    expect(received.filter((m) => m.key === 'SO-A').map((m) => m.value)).toEqual(
      seeded.a.map((letter) => letter.value),
    );
    expect(received.filter((m) => m.key === 'SO-B').map((m) => m.value)).toEqual(
      seeded.b.map((letter) => letter.value),
    );
    const keyless = received.filter((m) => m.key === null);
    expect(keyless.map((m) => m.value)).toEqual(['{not json']);
    expect(keyless[0]?.headers).toEqual(seeded.k[0]?.headers);
    const states = await letterStates();
    expect(states.filter((state) => !state.replayed).map((state) => state.id)).toEqual([
      seeded.k[1]?.id,
    ]);
    expect(await blocked('SO-A')).toBe(false);
    expect(await blocked('SO-B')).toBe(false);
  });

  it('never loses a letter: when publishing fails after the commit, the outbox keeps them and publishes them later, in order', async () => {
    const seeded = await seed();
    const failing = new SwitchableProducer(producer);
    failing.failing = true;
    const { service: replay, relay } = service(TOPICS.crash, failing, 300);

    await expect(replay.replay({ orderId: 'SO-A' })).rejects.toBeInstanceOf(
      ReplayNotPublishedError,
    );
    // Committed together: marked replayed, unblocked, and waiting in the outbox.
    expect(await blocked('SO-A')).toBe(false);
    const states = await letterStates();
    for (const letter of seeded.a) {
      expect(states.find((state) => state.id === letter.id)?.replayed).toBe(true);
    }
    const pending = await db.database.sql.query<{
      topic: string;
      key: string;
      headers: Record<string, string>;
    }>('SELECT topic, key, headers FROM outbox WHERE published_at IS NULL ORDER BY id');
    expect(pending.map((row) => [row.topic, row.key])).toEqual([
      [TOPICS.crash, 'SO-A'],
      [TOPICS.crash, 'SO-A'],
      [TOPICS.crash, 'SO-A'],
    ]);
    expect(pending[0]?.headers).toEqual(seeded.a[0]?.headers);

    // Kafka is back: any relay (the worker's, here this one) publishes them in order.
    failing.failing = false;
    expect((await relay.flush(10_000)).drained).toBe(true);
    await waitFor('the replayed events', () => collector.of(TOPICS.crash).length >= 3);
    expect(collector.of(TOPICS.crash).map((message) => message.value)).toEqual(
      seeded.a.map((letter) => letter.value),
    );
  });

  it('two replays at once publish each letter once', async () => {
    const seeded = await seed();
    const one = service(TOPICS.concurrent).service;
    const two = service(TOPICS.concurrent).service;
    const [first, second] = await Promise.all([one.replay({}), two.replay({})]);
    expect(first.messages + second.messages).toBe(6);
    // A replay that planned a group the other one took meanwhile skips it.
    expect(first.skipped + second.skipped).toBeLessThanOrEqual(6);
    await waitFor('the replayed events', () => collector.of(TOPICS.concurrent).length >= 6);
    await sleep(300);
    expect(collector.of(TOPICS.concurrent)).toHaveLength(6);
    expect(
      collector
        .of(TOPICS.concurrent)
        .filter((message) => message.key === 'SO-A')
        .map((message) => message.value),
    ).toEqual(seeded.a.map((letter) => letter.value));
  });
});
