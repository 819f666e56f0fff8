/**
 * Issue 26 §3: a Postgres restart is survived, not crashed through. The real worker
 * (dist/src/main.js as a child process, so that an exit is seen for real) runs against a
 * Postgres of this file's own (testbed/postgres-instance.ts: the machine's shared server,
 * which other tests use, is never restarted), the run's Kafka and the sandbox. A fast-mode
 * restart (`pg_ctl restart -m fast`) ends every session with 57P01, whatever it was doing:
 *
 * 1. while the worker is idle: its pooled connections idle, its LISTEN connection and the
 *    outbox relay's lock connection held;
 * 2. under load, with batches in flight: the test holds a lock that the batches recording
 *    Payflow's answers wait for, so that pooled connections are busy in a statement, with
 *    payments created at Payflow whose outcome is not recorded yet, when the restart comes;
 * 3. Postgres down for 10 s under load (stopped and started again): long enough for the
 *    back-offs of whatever retries meanwhile to grow;
 * 4. its LISTEN and lock connections ended alone (pg_terminate_backend: 57P01 as well),
 *    while the relay is idle.
 *
 * Each time: the process stays up (no unhandled 'error', no exit), every order sent before,
 * during and after the restart takes effect exactly once (one payment per order at the
 * sandbox, testbed/invariants.ts), the LISTEN and lock connections come back, and a new
 * order is processed again soon after Postgres is back; the times are printed (speed
 * targets are the benchmarks' business, the bounds asserted here are generous time-outs).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import {
  checkInvariants,
  eventsOnTopic,
  formatReport,
  waitSettled,
} from '../../testbed/invariants.js';
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';
import { PacedProducer } from '../../testbed/kafka-io.js';
import { interleave, planOrders, type PlannedEvent } from '../../testbed/order-load.js';
import { PostgresInstance } from '../../testbed/postgres-instance.js';
import { allSandboxPayments } from '../../testbed/sandbox-pages.js';
import { builtWorkerMain, WorkerProcess } from '../../testbed/worker-process.js';
import { buildCli } from '../cli/cli-test-kit.js';
import {
  createTopicSet,
  deleteTopics,
  testKafkaCluster,
  topicSetFor,
  type TopicSet,
} from '../support/kafka-test-bed.js';
import { workerEnvironment } from '../support/pipeline.js';
import { startPostgres, stopPostgres } from '../support/postgres-outage.js';
import { startTestSandbox, type SandboxHandle } from '../support/sandbox.js';
import {
  observerSession,
  terminateWorkerSession,
  waitForSessions,
  type WorkerSessions,
} from '../support/worker-sessions.js';

const DATABASE = 'payflow_bridge_restart_test';
const SETTLE_TIMEOUT_MS = 90_000;
/** Generous: the target (5 s) is printed, not asserted, so that a busy machine cannot flake it. */
const PROCESS_AGAIN_TIMEOUT_MS = 30_000;
/** What a crash through an unhandled error event or rejection leaves in the worker's output. */
const CRASH_TRACES =
  /Unhandled 'error' event|uncaughtException|unhandledRejection|triggerUncaughtException/;

/** How long Postgres stays down in the outage scenario. */
const OUTAGE_MS = 10_000;

/** A relay with no rows for 5 × its rebalance interval (2 s) counts as idle (relay-schedule.ts). */
const RELAY_IDLE_AFTER_MS = 11_000;
/**
 * A session ended alone is back well within this, and an idle relay's next scheduled
 * rebalance (its idle pass, 30 s) is well beyond it: only a relay that reacts to the loss
 * passes.
 */
const ALONE_BACK_TIMEOUT_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)} s`;
}

function describeSessions(sessions: WorkerSessions): string {
  return (
    `LISTEN ${sessions.listening}, relay lock ${sessions.relayLock}, idle ${sessions.idle}, ` +
    `busy ${sessions.busy} (${sessions.waitingForLock} waiting for a lock)`
  );
}

/** Payment requests alone (no follow-ups): orders whose effect is one payment at Payflow. */
function paymentRequests(prefix: string, orders: number, seed: number): PlannedEvent[] {
  return interleave(
    planOrders({ prefix, orders, seed }).map((plan) => ({
      ...plan,
      events: plan.events.slice(0, 1),
    })),
    seed,
  );
}

describe('a Postgres restart', () => {
  let cluster: KraftCluster;
  let topics: TopicSet;
  let postgres: PostgresInstance;
  let databaseUrl: string;
  let sandbox: SandboxHandle;
  let producer: PacedProducer;
  let worker: WorkerProcess;
  let logFile: string;
  const published: PlannedEvent[] = [];

  beforeAll(async () => {
    await buildCli();
    if (!existsSync(builtWorkerMain())) throw new Error(`${builtWorkerMain()} was not built`);
    cluster = testKafkaCluster(1);
    topics = topicSetFor('pg_restart');
    let started: PostgresInstance | undefined;
    [started, sandbox] = await Promise.all([
      PostgresInstance.start(),
      startTestSandbox(),
      createTopicSet(cluster, topics, { partitions: 12 }),
    ]);
    postgres = started;
    databaseUrl = await postgres.createDatabase(DATABASE);
    producer = await PacedProducer.start(cluster.brokers, topics.orders);
    logFile = join(tmpdir(), `pfb-pg-restart-${randomUUID().slice(0, 8)}.log`);
    worker = await WorkerProcess.start({
      env: {
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        ...workerEnvironment({
          databaseUrl,
          brokers: cluster.bootstrapServers,
          groupId: `pg-restart-${randomUUID().slice(0, 8)}`,
          topics,
          sandbox,
        }),
        DB_POOL_SIZE: '10',
        KAFKA_SESSION_TIMEOUT: '6s',
        KAFKA_FETCH_MAX_WAIT: '100ms',
        MAX_IN_FLIGHT: '64',
        RETRY_MAX_ATTEMPTS: '30',
        RETRY_MAX_DURATION: '5m',
        PAYFLOW_REQUEST_TIMEOUT: '5s',
        SETTLEMENT_ENABLED: 'false',
      },
      logFile,
      startTimeoutMs: 120_000,
    });
  }, 300_000);

  afterAll(async () => {
    await producer?.stop();
    await worker?.stop();
    await sandbox?.close();
    await postgres?.stop();
    if (topics !== undefined) await deleteTopics(cluster, topics).catch(() => undefined);
  }, 120_000);

  /** Publishes `events` (recorded for the invariants) at `perSecond`. */
  const send = (events: readonly PlannedEvent[], perSecond: number): Promise<void> => {
    published.push(...events);
    return producer.sendPaced(events, perSecond);
  };

  /** Every order sent so far took effect exactly once; nothing lost, nothing doubled. */
  const settleAndCheck = async (label: string): Promise<void> => {
    const onTopic = await eventsOnTopic(cluster.brokers, topics.orders, published);
    const open = await waitSettled(
      databaseUrl,
      onTopic.map((event) => event.eventId),
      SETTLE_TIMEOUT_MS,
    );
    const report = await checkInvariants({
      databaseUrl,
      sandboxUrl: sandbox.url,
      brokers: cluster.brokers,
      topics,
      events: published,
    });
    process.stdout.write(`\n${label}: ${open} open\n${formatReport(report)}\n`);
    expect({ open, problems: report.problems }).toEqual({ open: 0, problems: [] });
    expect(report.neverOnTopic).toBe(0);
    expect(report.ordersWithoutPayment).toEqual({});
    expect(report.duplicatePayments).toBe(0);
    expect(report.payflowPayments).toBe(new Set(published.map((event) => event.orderId)).size);
  };

  /** The worker is the same process, and nothing crashed through its error handling. */
  const expectStillUp = async (): Promise<void> => {
    const output = await readFile(logFile, 'utf8');
    expect(output.split('\n').filter((line) => CRASH_TRACES.test(line))).toEqual([]);
    expect(worker.exitCode).toBeUndefined();
    expect(worker.alive).toBe(true);
    expect(worker.fatalCount).toBe(0);
  };

  /**
   * Restarts Postgres; then sends a new order and measures, from the moment Postgres
   * accepts connections again, until it took effect (processed_events) and until the
   * LISTEN and relay lock connections are back, and prints both. Returns that moment.
   */
  const restartAndMeasure = async (label: string): Promise<number> => {
    await postgres.restart();
    return measureProcessingAgain(label, performance.now());
  };

  /** See restartAndMeasure; `back`: when Postgres accepted connections again. */
  const measureProcessingAgain = async (label: string, back: number): Promise<number> => {
    const prefix = `${label.replace(/\W+/g, '-')}-probe-${randomUUID().slice(0, 6)}`;
    const [probe] = paymentRequests(prefix, 1, 7);
    if (probe === undefined) throw new Error('no probe order');
    await send([probe], 100);
    const observer = await observerSession(databaseUrl);
    let tookEffect: number | undefined;
    try {
      const deadline = back + PROCESS_AGAIN_TIMEOUT_MS;
      while (performance.now() < deadline) {
        const { rows } = await observer.query<{ done: boolean }>(
          'SELECT EXISTS (SELECT 1 FROM processed_events WHERE event_id = $1) AS done',
          [probe.eventId],
        );
        if (rows[0]?.done === true) {
          tookEffect = performance.now() - back;
          break;
        }
        await sleep(50);
      }
    } finally {
      await observer.end().catch(() => undefined);
    }
    const sessions = await waitForSessions(
      databaseUrl,
      (seen) => seen.listening >= 1 && seen.relayLock === 1,
      PROCESS_AGAIN_TIMEOUT_MS,
    );
    const reconnected = performance.now() - back;
    process.stdout.write(
      `\n${label}: a new order took effect ${
        tookEffect === undefined ? 'NOT within the time-out' : seconds(tookEffect)
      } after Postgres accepted connections again (target 5 s); LISTEN and relay lock ` +
        `back within ${seconds(reconnected)} (${describeSessions(sessions)})\n`,
    );
    expect(tookEffect).toBeDefined();
    return back;
  };

  /** Milliseconds from `since` until every one of `events` took effect; undefined: time-out. */
  const untilTookEffect = async (
    events: readonly PlannedEvent[],
    since: number,
  ): Promise<number | undefined> => {
    const ids = events.map((event) => event.eventId);
    const observer = await observerSession(databaseUrl);
    try {
      while (performance.now() < since + SETTLE_TIMEOUT_MS) {
        const { rows } = await observer.query<{ open: number }>(
          `SELECT count(*)::int AS open FROM unnest($1::uuid[]) AS e (id)
            WHERE NOT EXISTS (SELECT 1 FROM processed_events p WHERE p.event_id = e.id)`,
          [ids],
        );
        if (rows[0]?.open === 0) return performance.now() - since;
        await sleep(100);
      }
      return undefined;
    } finally {
      await observer.end().catch(() => undefined);
    }
  };

  it('is survived while the worker is idle: pooled connections idle, LISTEN and relay lock held', async () => {
    await send(paymentRequests(`IDLE-${randomUUID().slice(0, 6)}`, 20, 1), 100);
    await settleAndCheck('before the idle restart');
    const held = await waitForSessions(
      databaseUrl,
      (seen) => seen.listening >= 1 && seen.relayLock === 1 && seen.idle >= 1,
      15_000,
    );
    process.stdout.write(`\nidle restart: the worker held ${describeSessions(held)}\n`);

    await restartAndMeasure('idle restart');
    await settleAndCheck('after the idle restart');
    await expectStillUp();
  }, 240_000);

  it('is survived under load, with batches in flight and pooled connections busy', async () => {
    // The outbox takes every status event in the batch that completes an attempt: with
    // this lock held, attempts begin and their Payflow calls go out, but the batches that
    // record the outcomes wait (as does the relay's pass), on busy pooled connections, when
    // the restart ends every session (this one too).
    const holder: pg.Client = await observerSession(databaseUrl);
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE outbox IN EXCLUSIVE MODE');
    const paymentsBefore = (await allSandboxPayments(sandbox.url)).length;
    const held = interleave(
      planOrders({ prefix: `HELD-${randomUUID().slice(0, 6)}`, orders: 60, seed: 2 }),
      2,
    );
    await send(held, 100);
    const sessions = await waitForSessions(
      databaseUrl,
      (seen) => seen.waitingForLock >= 2 && seen.listening >= 1 && seen.relayLock === 1,
      15_000,
    );
    const calledMeanwhile = (await allSandboxPayments(sandbox.url)).length - paymentsBefore;
    process.stdout.write(
      `\nrestart under load: the worker held ${describeSessions(sessions)}; ` +
        `${calledMeanwhile} payments created at Payflow whose outcome waits to be recorded\n`,
    );
    expect(calledMeanwhile).toBeGreaterThan(0);
    // Orders keep coming while Postgres goes down and comes back.
    const during = send(
      interleave(
        planOrders({ prefix: `DURING-${randomUUID().slice(0, 6)}`, orders: 60, seed: 3 }),
        3,
      ),
      40,
    );
    await sleep(500);

    const back = await restartAndMeasure('restart under load');
    await holder.end().catch(() => undefined);
    const drained = await untilTookEffect(held, back);
    process.stdout.write(
      `restart under load: the ${held.length} events held up by the restart all took effect ` +
        `${drained === undefined ? 'NOT within the time-out' : seconds(drained)} after it\n`,
    );
    expect(drained).toBeDefined();
    await during;
    await settleAndCheck('after the restart under load');
    await expectStillUp();
  }, 300_000);

  it('is survived when Postgres is down for 10 s under load, and the worker processes again soon after', async () => {
    const during = interleave(
      planOrders({ prefix: `DOWN-${randomUUID().slice(0, 6)}`, orders: 60, seed: 5 }),
      5,
    );
    const sending = send(during, 20);
    await sleep(1_000);
    await stopPostgres(postgres);
    // Long enough for the back-offs of everything that retries meanwhile to grow.
    await sleep(OUTAGE_MS);
    await startPostgres(postgres);
    const back = await measureProcessingAgain('10 s outage', performance.now());
    await sending;
    const drained = await untilTookEffect(during, back);
    process.stdout.write(
      `10 s outage: the ${during.length} events sent while Postgres was down all took effect ` +
        `${drained === undefined ? 'NOT within the time-out' : seconds(drained)} after it was back\n`,
    );
    expect(drained).toBeDefined();
    await settleAndCheck('after the 10 s outage');
    await expectStillUp();
  }, 300_000);

  it('survives its LISTEN and lock connections ended alone (pg_terminate_backend, 57P01)', async () => {
    // A relay that saw no rows for a while revisits its buckets only with its idle pass
    // (30 s): its lock connection must come back without waiting for that.
    await sleep(RELAY_IDLE_AFTER_MS);
    for (const kind of ['listening', 'relayLock'] as const) {
      const admin = await observerSession(databaseUrl);
      let ended: number;
      try {
        ended = await terminateWorkerSession(admin, kind);
      } finally {
        await admin.end().catch(() => undefined);
      }
      expect(ended).toBe(1);
      const at = performance.now();
      await waitForSessions(
        databaseUrl,
        (seen) => seen.listening >= 1 && seen.relayLock === 1,
        ALONE_BACK_TIMEOUT_MS,
      );
      process.stdout.write(
        `\n${kind === 'listening' ? 'LISTEN' : 'relay lock'} connection ended alone: back ` +
          `within ${seconds(performance.now() - at)}\n`,
      );
    }
    await send(paymentRequests(`ALONE-${randomUUID().slice(0, 6)}`, 10, 4), 100);
    await settleAndCheck('after the sessions ended alone');
    await expectStillUp();
    const problems = [...new Set(worker.problems.map((line) => line.msg))];
    process.stdout.write(`\nworker warnings and errors (distinct): ${problems.join(' | ')}\n`);
  }, 240_000);
});
