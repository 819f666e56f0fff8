/**
 * The operator CLI as operators run it: compiled (`tsc -p tsconfig.build.json`, what
 * `npm run build` does) and started as `node bin/payflow-bridge.js …` against a test
 * database and real Kafka (a topic of this file), with no Payflow or webhook variables set.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  createTopics,
  deleteTopics,
  testKafkaCluster,
  topicNamesFor,
} from '../support/kafka-test-bed.js';
import {
  TopicCollector,
  openDatabase,
  pendingCount,
  sleep,
  testKafka,
  waitFor,
  type OpenDatabase,
} from '../outbox/outbox-test-kit.js';
import {
  SECRETS,
  buildCli,
  hoursAgo,
  insertDeadLetter,
  insertOrder,
  runBinary,
  seedOrderWithPayments,
  type BinaryResult,
  type SeededLetter,
} from './cli-test-kit.js';

const { orders: TOPIC } = topicNamesFor('cli', ['orders']);

describe('payflow-bridge CLI (compiled)', () => {
  let testDb: TestDatabase;
  let db: OpenDatabase;
  const cluster = testKafkaCluster(1);
  let collector: TopicCollector;

  const run = (args: string[], env: Record<string, string> = {}): Promise<BinaryResult> =>
    runBinary(args, {
      DATABASE_URL: testDb.url,
      KAFKA_BROKERS: cluster.bootstrapServers,
      TOPIC_ORDERS: TOPIC,
      ...env,
    });

  const unreplayed = async (): Promise<string[]> =>
    (
      await db.database.sql.query<{ id: string }>(
        'SELECT d.id::text AS id FROM dead_letters d WHERE d.replayed_at IS NULL ORDER BY d.id',
      )
    ).map((row) => row.id);

  const blocked = async (orderId: string): Promise<boolean> => {
    const [row] = await db.database.sql.query<{ blocked: boolean }>(
      'SELECT blocked_at IS NOT NULL AS blocked FROM orders WHERE order_id = $1',
      [orderId],
    );
    return row?.blocked ?? false;
  };

  /** SO-1: rejected + parked behind it; SO-2: in doubt; one key-less letter. */
  const seedLetters = async (): Promise<{ one: SeededLetter[]; two: SeededLetter[] }> => {
    const sql = db.database.sql;
    await insertOrder(sql, 'SO-1', { blocked: true });
    await insertOrder(sql, 'SO-2', { blocked: true });
    const one1 = await insertDeadLetter(sql, {
      orderId: 'SO-1',
      reason: 'rejected_by_payflow',
      failedAt: hoursAgo(30),
      eventType: 'order.payment_requested',
    });
    const two1 = await insertDeadLetter(sql, {
      orderId: 'SO-2',
      reason: 'in_doubt',
      failedAt: hoursAgo(20),
    });
    const one2 = await insertDeadLetter(sql, {
      orderId: 'SO-1',
      reason: 'blocked_by_earlier_failure',
      failedAt: hoursAgo(10),
    });
    await insertDeadLetter(sql, { orderId: null, reason: 'invalid_json', failedAt: hoursAgo(50) });
    return { one: [one1, one2], two: [two1] };
  };

  beforeAll(async () => {
    const [database] = await Promise.all([
      createTestDatabase('cli_binary'),
      createTopics(cluster, [TOPIC], 4),
      buildCli(),
    ]);
    testDb = database;
    db = await openDatabase(testDb.url, 2);
    collector = await TopicCollector.start(testKafka(cluster.brokers, 'cli-binary-test'), [TOPIC]);
  }, 180_000);

  afterAll(async () => {
    await collector?.stop();
    await db?.close();
    await testDb?.drop();
    await deleteTopics(cluster, [TOPIC]);
  });

  beforeEach(async () => {
    await db.database.sql.execute(
      'TRUNCATE dead_letters, orders, outbox, payments, installments, documents, refunds, payment_status_history',
    );
  });

  it('shows help, and exits 2 with one line on a usage error', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/Usage: payflow-bridge/);
    expect(help.out).toMatch(/dlq\s/);
    expect(help.out).toMatch(/order\s/);

    for (const args of [
      [],
      ['launch'],
      ['dlq'],
      ['dlq', 'rewind'],
      ['dlq', 'replay', '--bogus'],
      ['dlq', 'replay', '--reason', 'sunspots'],
      ['dlq', 'replay', '--since', 'yesterday'],
      ['dlq', 'replay', 'SO-1'],
      ['order', 'show'],
      ['order', 'show', 'SO-1', 'SO-2'],
    ]) {
      const result = await run(args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.out).toBe('');
    }
    const reason = await run(['dlq', 'replay', '--reason', 'sunspots']);
    expect(reason.err).toBe(
      'payflow-bridge: --reason must be one of invalid_json, invalid_event, mapping_failed, ' +
        'rejected_by_payflow, retries_exhausted, blocked_by_earlier_failure, in_doubt, supersede_refused ' +
        '(got "sunspots") (see payflow-bridge --help)\n',
    );
    const option = await run(['dlq', 'replay', '--bogus']);
    expect(option.err).toBe("error: unknown option '--bogus'\n");
  });

  it('order show prints the order as a table, or JSON, never a secret; unknown order exits 1', async () => {
    await seedOrderWithPayments(db.database.sql, 'SO-10042');
    const text = await run(['order', 'show', 'SO-10042']);
    expect(text.err).toBe('');
    expect(text.code).toBe(0);
    for (const heading of [
      'Order SO-10042',
      'Payments (2)',
      '    Installments',
      '    Documents',
      '    Refunds',
      '    Status history',
      'Dead letters (2, 1 not replayed)',
    ]) {
      expect(text.out).toContain(heading);
    }
    expect(text.out).toMatch(/total gross\s+1249\.50 NOK/);

    const json = await run(['order', 'show', 'SO-10042', '--json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.out) as { order: { orderId: string }; payments: unknown[] };
    expect(parsed.order.orderId).toBe('SO-10042');
    expect(parsed.payments).toHaveLength(2);

    for (const output of [text.out, json.out]) {
      for (const secret of Object.values(SECRETS)) expect(output).not.toContain(secret);
    }

    const missing = await run(['order', 'show', 'SO-NOPE']);
    expect(missing.code).toBe(1);
    expect(missing.out).toBe('');
    expect(missing.err).toBe(
      'payflow-bridge: order "SO-NOPE" not found (no order and no dead letter has this id)\n',
    );
  });

  it('dlq replay --dry-run prints the plan and changes nothing', async () => {
    await seedLetters();
    const before = await unreplayed();
    const result = await run(['dlq', 'replay', '--reason', 'rejected_by_payflow', '--dry-run']);
    expect(result.code).toBe(0);
    expect(result.out).toContain(
      `Dry run, nothing changed. Would replay 2 message(s) of 1 order(s) to ${TOPIC}:`,
    );
    expect(result.out).toContain('order SO-1: 2 message(s), then unblocked');
    expect(result.out).toMatch(/order\.payment_requested\s+rejected_by_payflow/);
    expect(result.out).toContain('Reasons: blocked_by_earlier_failure 1, rejected_by_payflow 1');
    expect(await unreplayed()).toEqual(before);
    expect(await blocked('SO-1')).toBe(true);
    const [outbox] = await db.database.sql.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM outbox',
    );
    expect(outbox?.count).toBe(0);
  });

  it('dlq replay republishes the selected orders in order, marks them replayed and unblocks them', async () => {
    const seeded = await seedLetters();
    const result = await run(['dlq', 'replay', '--reason', 'rejected_by_payflow']);
    expect(result.code).toBe(0);
    expect(result.out).toBe(
      `Replayed 2 message(s) of 1 order(s) to ${TOPIC}.\n` +
        'Reasons: blocked_by_earlier_failure 1, rejected_by_payflow 1\n' +
        'Unblocked: SO-1\n',
    );
    // Not a terminal: progress as plain lines.
    expect(result.err).toBe(
      'replaying 2 message(s): 1 order(s), 0 key-less\n' +
        'replayed order SO-1: 2 message(s) (2/2)\n',
    );
    expect(await blocked('SO-1')).toBe(false);
    expect(await blocked('SO-2')).toBe(true);
    expect(await pendingCount(db.database)).toBe(0);

    await waitFor('the replayed events', () => collector.of(TOPIC).length >= 2);
    await sleep(200);
    expect(collector.of(TOPIC).map((message) => [message.key, message.value])).toEqual(
      seeded.one.map((letter) => ['SO-1', letter.value]),
    );
    expect(collector.of(TOPIC)[0]?.headers).toEqual(seeded.one[0]?.headers);

    // --order, then --since (which brings nothing older than 15 h: the key-less letter stays).
    const byOrder = await run(['dlq', 'replay', '--order', 'SO-2']);
    expect(byOrder.code).toBe(0);
    expect(byOrder.out).toContain(`Replayed 1 message(s) of 1 order(s) to ${TOPIC}.`);
    expect(await blocked('SO-2')).toBe(false);
    const since = await run(['dlq', 'replay', '--since', '15h']);
    expect(since.code).toBe(0);
    expect(since.out).toBe('Nothing to replay: no unreplayed dead letter matches.\n');
    expect(await unreplayed()).toHaveLength(1);
    const all = await run(['dlq', 'replay', '--since', '3d']);
    expect(all.out).toContain('Replayed 1 message(s) of 0 order(s) and 1 key-less dead letter(s)');
    expect(await unreplayed()).toEqual([]);
  });

  it('exits 1 with one line when Kafka or the database is unreachable, and changes nothing', async () => {
    await seedLetters();
    const before = await unreplayed();

    const kafkaDown = await run(['dlq', 'replay'], { KAFKA_BROKERS: '127.0.0.1:1' });
    expect(kafkaDown.code).toBe(1);
    expect(kafkaDown.out).toBe('');
    expect(kafkaDown.err.split('\n').filter(Boolean)).toHaveLength(1);
    expect(kafkaDown.err).toMatch(/^payflow-bridge: cannot connect to Kafka \(127\.0\.0\.1:1\): /);
    expect(await unreplayed()).toEqual(before);
    expect(await blocked('SO-1')).toBe(true);

    const dbDown = await run(['order', 'show', 'SO-1'], {
      DATABASE_URL: 'postgres://operator:hunter2@127.0.0.1:1/payflow_bridge',
    });
    expect(dbDown.code).toBe(1);
    expect(dbDown.err).toBe(
      'payflow-bridge: cannot connect to Postgres at 127.0.0.1:1: cannot reach the server (ECONNREFUSED)\n',
    );
    expect(dbDown.err).not.toContain('hunter2');

    const badConfig = await run(['order', 'show', 'SO-1'], { DATABASE_URL: 'mysql://x' });
    expect(badConfig.code).toBe(1);
    expect(badConfig.err).toBe(
      'payflow-bridge: Invalid configuration: DATABASE_URL must be a postgres:// URL\n',
    );
  });
});
