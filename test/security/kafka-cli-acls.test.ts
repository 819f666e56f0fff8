/**
 * The operator commands on a secured Kafka, each as a principal of its own holding exactly
 * the ACLs src/messaging/security/kafka-acls.ts lists for it (what docs/security.md documents):
 * `topics create` (CREATE, DESCRIBE on the four topics), `dlq replay` (WRITE, DESCRIBE on
 * the orders topic) and `in-doubt resolve` (WRITE, DESCRIBE on the orders and status
 * topics), beside a worker with its own least privilege. Without them, each is refused with
 * one line. The compiled CLI, as an operator runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config/app-config.js';
import { silentLogger } from '../../src/logging/logger.js';
import {
  dlqReplayAcls,
  inDoubtResolveAcls,
  topicsCreateAcls,
  workerAcls,
} from '../../src/messaging/security/kafka-acls.js';
import { startWorker, type Worker } from '../../src/worker.js';
import { SecuredKafkaCluster } from '../../testbed/kafka/secured-cluster.js';
import {
  buildCli,
  hoursAgo,
  insertDeadLetter,
  runBinary,
  type BinaryResult,
} from '../cli/cli-test-kit.js';
import { sandboxPayments } from '../orders/support/pipeline.js';
import { openDatabase, type OpenDatabase } from '../outbox/outbox-test-kit.js';
import {
  anEnvelope,
  anOrderId,
  markedPaidData,
  paymentRequestedData,
} from '../support/builders.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { topicSetFor, type TopicSet } from '../support/kafka-test-bed.js';
import { TopicReader, workerEnvironment } from '../support/pipeline.js';
import {
  SANDBOX_CLIENT_ID,
  SANDBOX_CLIENT_SECRET,
  sandboxControl,
  startTestSandbox,
  type SandboxHandle,
} from '../support/sandbox.js';
import {
  aclConfigOf,
  adminKafka,
  securedKafkaEnvironment,
  securedTopicSet,
} from '../support/secured-kafka.js';

interface StatusEvent {
  readonly type: string;
  readonly orderId: string;
  readonly paymentId: string | null;
}

let kafka: SecuredKafkaCluster;
let database: TestDatabase;
let sandbox: SandboxHandle;

beforeAll(async () => {
  [kafka, database, sandbox] = await Promise.all([
    SecuredKafkaCluster.start({ users: ['worker', 'creator', 'replayer', 'resolver', 'nobody'] }),
    createTestDatabase('sec_cli'),
    startTestSandbox(),
    buildCli(),
  ]);
}, 300_000);

afterAll(async () => {
  await Promise.allSettled([sandbox?.close(), database?.drop()]);
  await kafka?.stop();
});

/** The compiled CLI as `user` (SCRAM-SHA-512 over SASL_SSL) on these topics. */
function cliAs(user: string, topics: TopicSet, args: readonly string[]): Promise<BinaryResult> {
  return runBinary(args, {
    DATABASE_URL: database.url,
    ...securedKafkaEnvironment(kafka, {
      kind: 'sasl',
      mechanism: 'scram-sha-512',
      user,
      password: kafka.password(user),
    }),
    TOPIC_ORDERS: topics.orders,
    TOPIC_PAYMENT_STATUS: topics.status,
    TOPIC_SETTLEMENTS: topics.settlements,
    PAYFLOW_BASE_URL: sandbox.url,
    PAYFLOW_PARTNER_BASE_URL: sandbox.partnerUrl,
    PAYFLOW_CLIENT_ID: SANDBOX_CLIENT_ID,
    PAYFLOW_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
  });
}

describe('topics create with its ACLs', () => {
  it('is refused without them, and creates the four topics with exactly them', async () => {
    const topics = topicSetFor('sec_cli_create');
    const config = aclConfigOf(topics, 'unused');
    const refused = await cliAs('nobody', topics, ['topics', 'create', '--partitions', '3']);
    expect(refused.code).toBe(1);
    expect(refused.err.trim().split('\n')).toHaveLength(1);
    expect(refused.err).toMatch(
      new RegExp(`could not create topic ${topics.orders.replace(/\./g, '\\.')}: .*authoriz`, 'i'),
    );

    await kafka.grantAcls('User:creator', topicsCreateAcls(config));
    const created = await cliAs('creator', topics, ['topics', 'create', '--partitions', '3']);
    expect(created.code).toBe(0);
    const names = [topics.orders, topics.dlq, topics.status, topics.settlements];
    expect(created.out.trim().split('\n')).toEqual(
      names.map((name) => `created ${name} (3 partitions, replication factor 1)`),
    );
    const again = await cliAs('creator', topics, ['topics', 'create']);
    expect(again.code).toBe(0);
    expect(again.out.trim().split('\n')).toEqual(
      names.map((name) => `exists ${name} (3 partitions, replication factor 1)`),
    );
  });
});

describe('dlq replay and in-doubt resolve with their ACLs, beside the worker', () => {
  let topics: TopicSet;
  let worker: Worker;
  let status: TopicReader;
  let db: OpenDatabase;

  beforeAll(async () => {
    const set = await securedTopicSet(kafka, 'sec_cli');
    topics = set.topics;
    const config = aclConfigOf(topics, set.groupId);
    await Promise.all([
      kafka.grantAcls('User:worker', workerAcls(config)),
      kafka.grantAcls('User:replayer', dlqReplayAcls(config)),
      kafka.grantAcls('User:resolver', inDoubtResolveAcls(config)),
    ]);
    db = await openDatabase(database.url, 2);
    [worker, status] = await Promise.all([
      startWorker(
        loadConfig({
          ...workerEnvironment({
            databaseUrl: database.url,
            brokers: 'replaced-below:9092',
            groupId: set.groupId,
            topics,
            sandbox,
          }),
          ...securedKafkaEnvironment(kafka, {
            kind: 'sasl',
            mechanism: 'scram-sha-512',
            user: 'worker',
            password: kafka.password('worker'),
          }),
          KAFKA_SESSION_TIMEOUT: '6s',
          KAFKA_FETCH_MAX_WAIT: '100ms',
          PAYFLOW_REQUEST_TIMEOUT: '2s',
          LOG_LEVEL: 'silent',
        }),
        silentLogger(),
        { relay: { idlePollMs: 100 }, transport: { retry: { baseDelayMs: 50, maxDelayMs: 200 } } },
      ),
      TopicReader.start(adminKafka(kafka), topics.status),
    ]);
  }, 180_000);

  afterAll(async () => {
    await worker?.shutdown();
    await Promise.allSettled([status?.stop(), db?.close()]);
  });

  const eventsOf = (orderId: string): StatusEvent[] =>
    status.json<StatusEvent>().filter((event) => event.orderId === orderId);

  async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it('dlq replay republishes to the orders topic with WRITE on it, and nothing without', async () => {
    const orderId = anOrderId('SECDLQ');
    await insertDeadLetter(db.database.sql, {
      orderId,
      reason: 'retries_exhausted',
      failedAt: hoursAgo(1),
      eventType: 'order.payment_requested',
      topic: topics.orders,
      value: JSON.stringify(
        anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
      ),
    });
    const refused = await cliAs('nobody', topics, ['dlq', 'replay', '--order', orderId]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/denied|authoriz/i);

    const replayed = await cliAs('replayer', topics, ['dlq', 'replay', '--order', orderId]);
    expect(replayed.code).toBe(0);
    expect(replayed.out).toContain(`Replayed 1 message(s) of 1 order(s) to ${topics.orders}.`);
    // The worker took the replayed event: the payment exists and is announced.
    await status.waitFor(() => eventsOf(orderId).length > 0, 60_000);
    expect(eventsOf(orderId).map((event) => event.type)).toEqual(['payment.created']);
  });

  it('in-doubt resolve publishes the adopted payment and the parked event with its ACLs', async () => {
    const orderId = anOrderId('SECDOUBT');
    await sandboxControl(sandbox, 'POST', '/faults', {
      method: 'POST',
      path: '/api/payments',
      reset: true,
      afterProcessing: true,
      times: 1,
    });
    const publisher = adminKafka(kafka).producer();
    await publisher.connect();
    try {
      await publisher.send({
        topic: topics.orders,
        messages: [
          {
            key: orderId,
            value: JSON.stringify(
              anEnvelope('order.payment_requested', paymentRequestedData(), { orderId }),
            ),
          },
          {
            key: orderId,
            value: JSON.stringify(anEnvelope('order.marked_paid', markedPaidData(), { orderId })),
          },
        ],
      });
    } finally {
      await publisher.disconnect();
    }
    await until('both events of the order to be dead-lettered', async () => {
      const rows = await db.database.sql.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM dead_letters WHERE order_id = $1',
        [orderId],
      );
      return rows[0]?.n === 2;
    });
    const [atPayflow] = await sandboxPayments(sandbox, orderId);
    if (atPayflow === undefined) throw new Error('the sandbox did not create the payment');

    const resolved = await cliAs('resolver', topics, [
      'in-doubt',
      'resolve',
      orderId,
      '--payment',
      atPayflow.id,
      '--by',
      `sec-${randomUUID().slice(0, 4)}`,
    ]);
    expect(resolved.err).toBe('');
    expect(resolved.code).toBe(0);
    expect(resolved.out).toContain(`Order ${orderId}: adopted Payflow payment ${atPayflow.id}`);
    await status.waitFor(
      () => eventsOf(orderId).some((event) => event.type === 'payment.marked_paid'),
      60_000,
    );
    const created = eventsOf(orderId).filter((event) => event.type === 'payment.created');
    expect(created).toHaveLength(1);
    expect(created[0]?.paymentId).toBe(atPayflow.id);
  });
});
