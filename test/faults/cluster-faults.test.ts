/**
 * Faults on a real 3-node Kafka cluster (replication factor 3, min.insync.replicas 2) with
 * workers as child processes (the real dist/src/main.js) in one consumer group, under a
 * steady load of order lives (payment requests and follow-ups of every kind), the sandbox
 * over HTTP and a fresh database. The scenarios share the cluster and run one after the
 * other; each ends with the invariants of testbed/invariants.ts: nothing lost, no payment
 * doubled, every event taken effect once or dead-lettered with a reason, status events
 * complete and in order per order.
 *
 * 1. A broker is SIGKILLed and restarted 15 s later.
 * 2. A worker is SIGKILLed while it holds events (the coordinator notices after the
 *    session time-out, 6 s: a real rebalance), started again, and a third worker joins.
 * 3. The whole cluster is down for 30 s: the workers stay up, /health/ready says the
 *    consumer is down, and they resume without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';
import {
  checkInvariants,
  eventsOnTopic,
  formatReport,
  waitSettled,
  type InvariantReport,
} from '../../testbed/invariants.js';
import { PacedProducer } from '../../testbed/kafka-io.js';
import { interleave, planOrders, type PlannedEvent } from '../../testbed/order-load.js';
import { builtWorkerMain, WorkerProcess } from '../../testbed/worker-process.js';
import { buildCli } from '../cli/cli-test-kit.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import {
  createTopicSet,
  testKafkaCluster,
  topicSetFor,
  type TopicSet,
} from '../support/kafka-test-bed.js';
import { workerEnvironment } from '../support/pipeline.js';
import { startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import { sleep } from '../../src/timing/sleep.js';
import { until } from '../support/until.js';

const ORDERS_PER_SCENARIO = 120;
const EVENTS_PER_SECOND = 25;
const SETTLE_TIMEOUT_MS = 90_000;

describe('faults on a 3-node Kafka cluster', () => {
  let cluster: KraftCluster;
  let topics: TopicSet;
  let database: TestDatabase;
  let sandbox: SandboxHandle;
  let producer: PacedProducer;
  let groupId: string;
  const workers: WorkerProcess[] = [];
  const published: PlannedEvent[] = [];
  let scenario = 0;
  let sendingNow: Promise<void> = Promise.resolve();

  const workerEnv = (): Record<string, string> => ({
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    ...workerEnvironment({
      databaseUrl: database.url,
      brokers: cluster.bootstrapServers,
      groupId,
      topics,
      sandbox,
    }),
    DB_POOL_SIZE: '5',
    KAFKA_SESSION_TIMEOUT: '6s',
    KAFKA_FETCH_MAX_WAIT: '500ms',
    MAX_IN_FLIGHT: '64',
    RETRY_MAX_ATTEMPTS: '20',
    PAYFLOW_REQUEST_TIMEOUT: '5s',
    SETTLEMENT_ENABLED: 'false',
  });

  const startWorker = async (name: string): Promise<WorkerProcess> => {
    const worker = await WorkerProcess.start({
      env: workerEnv(),
      logFile: join(tmpdir(), `pfb-faults-${groupId}-${name}.log`),
      startTimeoutMs: 90_000,
    });
    workers.push(worker);
    return worker;
  };

  const live = (): WorkerProcess[] => workers.filter((worker) => worker.alive);

  /** Plans a scenario's orders and sends them at the steady rate (in the background). */
  const load = (): { events: PlannedEvent[]; sending: Promise<void> } => {
    scenario++;
    const events = interleave(
      planOrders({
        prefix: `F${scenario}-${randomUUID().slice(0, 6)}`,
        orders: ORDERS_PER_SCENARIO,
        seed: scenario,
      }),
      scenario,
    );
    published.push(...events);
    const sending = producer.sendPaced(events, EVENTS_PER_SECOND);
    sendingNow = sending.catch(() => undefined);
    return { events, sending };
  };

  const settleAndCheck = async (events: readonly PlannedEvent[]): Promise<InvariantReport> => {
    // Only what reached the topic can take effect: kafkajs 2.2.4 may resolve a send whose
    // records a leader change lost (tulios/kafkajs#1303); those are reported, not awaited.
    const onTopic = await eventsOnTopic(cluster.brokers, topics.orders, events);
    const open = await waitSettled(
      database.url,
      onTopic.map((event) => event.eventId),
      SETTLE_TIMEOUT_MS,
    );
    const report = await checkInvariants({
      databaseUrl: database.url,
      sandboxUrl: sandbox.url,
      brokers: cluster.brokers,
      topics,
      events,
    });
    process.stdout.write(
      `\nscenario ${scenario}: ${open} open; load producer: ${producer.failedSends} failed send(s)` +
        ` (last: ${producer.lastError ?? 'none'})\n${formatReport(report)}\n` +
        (report.neverOnTopicSample.length > 0
          ? `never on the topic: ${report.neverOnTopicSample.join('; ')}\n`
          : ''),
    );
    expect({ open, problems: report.problems }).toEqual({ open: 0, problems: [] });
    // Every order has exactly one Payflow payment, or its request was dead-lettered.
    const withoutPayment = Object.keys(report.ordersWithoutPayment);
    expect(
      withoutPayment.filter(
        (reason) =>
          !(reason in report.deadLettered) && reason !== 'request never on the order topic',
      ),
    ).toEqual([]);
    expect(report.duplicatePayments).toBe(0);
    return report;
  };

  beforeAll(async () => {
    await buildCli();
    if (!existsSync(builtWorkerMain())) throw new Error(`${builtWorkerMain()} was not built`);
    cluster = testKafkaCluster(3);
    if (cluster.nodes.some((node) => !cluster.isRunning(node.id))) await cluster.startAll();
    topics = topicSetFor('faults');
    groupId = `faults-${randomUUID().slice(0, 8)}`;
    // Before the workers: they check at start-up that their topics exist.
    // (On three nodes a broker may not know a new topic yet when kafkajs asks for its
    // leaders: ask again; a topic that exists already is left as it is.)
    for (let attempt = 1; ; attempt++) {
      try {
        await createTopicSet(cluster, topics, { partitions: 12 });
        break;
      } catch (error) {
        if (attempt >= 5) throw error;
        await sleep(1_000);
      }
    }
    [database, sandbox] = await Promise.all([createTestDatabase('faults'), startTestSandbox()]);
    producer = await PacedProducer.start(cluster.brokers, topics.orders);
    await Promise.all([startWorker('a'), startWorker('b')]);
  }, 240_000);

  afterAll(async () => {
    await producer?.stop();
    await sendingNow;
    await Promise.allSettled(workers.map((worker) => worker.kill()));
    // The shared cluster must be fully up for whoever uses it next.
    if (cluster !== undefined && cluster.nodes.some((node) => !cluster.isRunning(node.id))) {
      await cluster.startAll();
    }
    await sandbox?.close();
    await database?.drop();
  }, 180_000);

  it('loses and doubles nothing when a broker is SIGKILLed and restarted 15 s later', async () => {
    const started = Date.now();
    const { events, sending } = load();
    await sleep(3_000);
    const victim = 2;
    await cluster.kill(victim);
    await sleep(15_000);
    await cluster.restart(victim);
    await sending;
    await settleAndCheck(events);
    expect(live()).toHaveLength(2);
    process.stdout.write(`broker kill: ${Math.round((Date.now() - started) / 1000)} s\n`);
  }, 240_000);

  it('rebalances after a worker is SIGKILLed mid-batch, takes it back, and a third one joins', async () => {
    const started = Date.now();
    const { events, sending } = load();
    const [victim, survivor] = live();
    if (victim === undefined || survivor === undefined) throw new Error('two workers expected');
    // Mid-batch: the victim holds events (its in-flight gauge is above zero).
    await until(
      async () => ((await victim.metric('payflow_bridge_order_events_in_flight')) ?? 0) > 0,
      30_000,
      'the victim holds events',
    );
    const survivorAssignments = survivor.assignments;
    await victim.kill();
    // The coordinator notices only after the session time-out: a real rebalance.
    await until(
      () => survivor.assignments > survivorAssignments,
      30_000,
      'the survivor takes over',
    );
    expect(survivor.assigned.length).toBeGreaterThan(0);
    const restarted = await startWorker('a2');
    const third = await startWorker('c');
    await sending;
    await settleAndCheck(events);
    // All three consume: a probe of 60 new payment requests spreads over the 12
    // partitions, and every worker processes part of it.
    const before = await Promise.all(
      [survivor, restarted, third].map((worker) =>
        worker.metric('payflow_bridge_order_events_processed_total'),
      ),
    );
    const probe = interleave(
      planOrders({ prefix: `P2-${randomUUID().slice(0, 6)}`, orders: 60, seed: 99 }).map(
        (plan) => ({ ...plan, events: plan.events.slice(0, 1) }),
      ),
      99,
    );
    published.push(...probe);
    await producer.sendPaced(probe, 200);
    await settleAndCheck(probe);
    const after = await Promise.all(
      [survivor, restarted, third].map((worker) =>
        worker.metric('payflow_bridge_order_events_processed_total'),
      ),
    );
    const taken = after.map((count, index) => (count ?? 0) - (before[index] ?? 0));
    expect(taken.every((count) => count > 0)).toBe(true);
    expect(live()).toHaveLength(3);
    process.stdout.write(`worker kill: ${Math.round((Date.now() - started) / 1000)} s\n`);
  }, 300_000);

  it('keeps the workers up while the whole cluster is down for 30 s, and resumes without a restart', async () => {
    const started = Date.now();
    const before = live();
    const pids = before.map((worker) => worker.pid);
    const { events, sending } = load();
    await sleep(3_000);
    await cluster.stopAll();
    const downAt = Date.now();
    // Readiness says Kafka is down; liveness stays fine. (Checked at the end, so that the
    // rest of the scenario still runs when readiness is wrong.)
    let lastReady: unknown[] = [];
    const readinessProblem = await until(
      async () => {
        const answers = await Promise.all(before.map((worker) => worker.get('/health/ready')));
        lastReady = answers;
        return answers.every(
          (answer) =>
            answer.status === 503 &&
            /kafka|orderEvents|consumer/i.test(JSON.stringify(answer.body)),
        );
      },
      25_000,
      '/health/ready answers 503 naming the consumer on every worker',
    ).then(
      () => undefined,
      (error: unknown) => `${String(error)}; last answers: ${JSON.stringify(lastReady)}`,
    );
    for (const worker of before) {
      expect((await worker.get('/health/live')).status).toBe(200);
    }
    const processedBefore = await Promise.all(
      before.map((worker) => worker.metric('payflow_bridge_order_events_processed_total')),
    );
    await sleep(Math.max(0, 30_000 - (Date.now() - downAt)));
    expect(before.every((worker) => worker.alive)).toBe(true);
    await cluster.startAll();
    await sending;
    await settleAndCheck(events);
    // The same processes, consuming again.
    expect(live().map((worker) => worker.pid)).toEqual(pids);
    const processedAfter = await Promise.all(
      before.map((worker) => worker.metric('payflow_bridge_order_events_processed_total')),
    );
    const resumed = processedAfter.filter(
      (count, index) => (count ?? 0) > (processedBefore[index] ?? 0),
    );
    expect(resumed.length).toBeGreaterThan(0);
    await until(
      async () => {
        const answers = await Promise.all(before.map((worker) => worker.get('/health/ready')));
        return answers.every((answer) => answer.status === 200);
      },
      30_000,
      '/health/ready answers 200 again',
    );
    process.stdout.write(`cluster down: ${Math.round((Date.now() - started) / 1000)} s\n`);
    expect(readinessProblem).toBeUndefined();
  }, 300_000);
});
