/**
 * The bed of the deploy tests (the two-version upgrade and the rolling restart): the run's
 * 1-node Apache Kafka with topics of their own (12 partitions), a database, the Payflow
 * sandbox over HTTP, workers as child processes in one consumer group, a steady load of
 * order lives, and the end-of-run checks against the parties' own records: the sandbox's
 * payments, the status topic, and Postgres (dead letters, attempts in doubt, the outbox).
 */
import { expect } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';
import {
  checkInvariants,
  eventsOnTopic,
  formatReport,
  waitSettled,
} from '../../testbed/invariants.js';
import { PacedProducer, readTopicToEnd } from '../../testbed/kafka-io.js';
import { interleave, planOrders, type PlannedEvent } from '../../testbed/order-load.js';
import { allSandboxPayments } from '../../testbed/sandbox-pages.js';
import { WorkerProcess } from '../../testbed/worker-process.js';
import {
  createTestDatabase,
  databaseUrl,
  withAdminClient,
  type TestDatabase,
} from '../support/database.js';
import {
  createTopicSet,
  testKafkaCluster,
  topicSetFor,
  type TopicSet,
} from '../support/kafka-test-bed.js';
import { workerEnvironment } from '../support/pipeline.js';
import { startTestSandbox, type SandboxHandle } from '../support/sandbox.js';

/** Order events taken effect by one worker so far (its own counter; 0 when unreachable). */
export async function processedBy(worker: WorkerProcess): Promise<number> {
  return (await worker.metric('payflow_bridge_order_events_processed_total')) ?? 0;
}

/**
 * Order lives sent at a steady rate until stopped: batches of a few orders, each order's
 * events in its order (a payment request, then follow-ups of every kind).
 */
class SteadyLoad {
  readonly events: PlannedEvent[] = [];
  private stopping = false;
  private failure: Error | undefined;
  private readonly running: Promise<void>;
  private batch = 0;

  constructor(
    private readonly producer: PacedProducer,
    private readonly prefix: string,
    private readonly perSecond: number,
  ) {
    this.running = this.run().catch((error: unknown) => {
      this.failure = error instanceof Error ? error : new Error(String(error));
    });
  }

  /** Orders whose payment request was sent so far. */
  get orders(): number {
    return this.events.filter((event) => event.seq === 0).length;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.batch++;
      const events = interleave(
        planOrders({ prefix: `${this.prefix}-${this.batch}`, orders: 6, seed: this.batch }),
        this.batch,
      );
      this.events.push(...events);
      await this.producer.sendPaced(events, this.perSecond);
      // The producer was stopped under it (the bed closing): no more batches.
      if (this.producer.sent < this.events.length) break;
    }
  }

  /** Stops after the batch being sent; resolves when it is sent (throws if sending failed). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
    if (this.failure !== undefined) throw this.failure;
  }
}

export interface DeployBedOptions {
  readonly label: string;
  /** An empty database (the first worker migrates it) instead of a copy of the template. */
  readonly emptyDatabase?: boolean;
}

export class DeployBed {
  readonly workers: WorkerProcess[] = [];
  private readonly loads: SteadyLoad[] = [];
  readonly groupId = `deploy-${randomUUID().slice(0, 8)}`;
  readonly logDir = mkdtempSync(join(tmpdir(), 'pfb-deploy-'));

  private constructor(
    readonly cluster: KraftCluster,
    readonly topics: TopicSet,
    readonly database: TestDatabase,
    readonly sandbox: SandboxHandle,
    readonly producer: PacedProducer,
  ) {}

  static async start(options: DeployBedOptions): Promise<DeployBed> {
    const cluster = testKafkaCluster(1);
    const topics = topicSetFor(options.label);
    const [database, sandbox] = await Promise.all([
      options.emptyDatabase === true
        ? emptyDatabase(options.label)
        : createTestDatabase(options.label),
      startTestSandbox(),
      createTopicSet(cluster, topics, { partitions: 12 }),
    ]);
    const producer = await PacedProducer.start(cluster.brokers, topics.orders);
    return new DeployBed(cluster, topics, database, sandbox, producer);
  }

  env(): Record<string, string> {
    return {
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      ...workerEnvironment({
        databaseUrl: this.database.url,
        brokers: this.cluster.bootstrapServers,
        groupId: this.groupId,
        topics: this.topics,
        sandbox: this.sandbox,
      }),
      DB_POOL_SIZE: '5',
      KAFKA_SESSION_TIMEOUT: '6s',
      KAFKA_FETCH_MAX_WAIT: '500ms',
      MAX_IN_FLIGHT: '32',
      PAYFLOW_REQUEST_TIMEOUT: '5s',
      SETTLEMENT_ENABLED: 'false',
    };
  }

  /** Starts a steady load of order lives at `perSecond` events a second. */
  load(prefix: string, perSecond: number): SteadyLoad {
    const load = new SteadyLoad(this.producer, `${prefix}-${this.groupId}`, perSecond);
    this.loads.push(load);
    return load;
  }

  logFile(name: string): string {
    return join(this.logDir, `${name}.log`);
  }

  /** Starts a worker of the build whose entry point is `main`; resolves once it consumes. */
  async startWorker(main: string, name: string): Promise<WorkerProcess> {
    const worker = await WorkerProcess.start({
      main,
      env: this.env(),
      logFile: this.logFile(name),
      startTimeoutMs: 90_000,
    });
    this.workers.push(worker);
    return worker;
  }

  /** Ends everything; the workers' logs are kept when `keepLogs` (a failed test). */
  async close(keepLogs: boolean): Promise<void> {
    await this.producer.stop();
    await Promise.allSettled(this.loads.map((load) => load.stop()));
    await Promise.allSettled(this.workers.map((worker) => worker.kill()));
    await this.sandbox.close();
    await this.database.drop();
    if (keepLogs) process.stdout.write(`worker logs kept in ${this.logDir}\n`);
    else rmSync(this.logDir, { recursive: true, force: true });
  }

  /** One SQL query on the bed's database. */
  async query<Row extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<Row[]> {
    const client = new pg.Client({ connectionString: this.database.url });
    await client.connect();
    try {
      return (await client.query<Row>(sql, values)).rows;
    } finally {
      await client.end();
    }
  }

  /**
   * Waits until every event sent took effect and the outbox is empty, then checks what the
   * parties hold: every order exactly one payment at the sandbox, exactly one
   * payment.created status event (by distinct eventId), no dead letter, no call in doubt,
   * nothing left in the outbox, and the invariants of testbed/invariants.ts.
   */
  async expectNothingLostOrDoubled(events: readonly PlannedEvent[]): Promise<void> {
    const onTopic = await eventsOnTopic(this.cluster.brokers, this.topics.orders, events);
    expect(onTopic).toHaveLength(events.length);
    const open = await waitSettled(
      this.database.url,
      events.map((event) => event.eventId),
      90_000,
    );
    const report = await checkInvariants({
      databaseUrl: this.database.url,
      sandboxUrl: this.sandbox.url,
      brokers: this.cluster.brokers,
      topics: this.topics,
      events,
    });
    process.stdout.write(`\n${formatReport(report)}\n`);
    for (const sample of report.status.outOfOrderSample) {
      // The evidence: the order's outbox rows, as written and as published.
      const order = sample.slice(0, sample.indexOf(':'));
      const rows = await this.query<{
        id: string;
        bucket: number;
        created_at: string;
        published_at: string;
      }>(
        `SELECT id::text, bucket, created_at::text, published_at::text FROM outbox
          WHERE key = $1 ORDER BY id`,
        [order],
      );
      process.stdout.write(`outbox of ${order}: ${JSON.stringify(rows)}\n`);
    }
    const orders = new Set(events.map((event) => event.orderId));

    // The sandbox's own records: one payment per order.
    const payments = await allSandboxPayments<{
      readonly body: { readonly payment?: { readonly internalRef?: string } };
    }>(this.sandbox.url);
    const perOrder = new Map<string, number>();
    for (const payment of payments) {
      const order = payment.body.payment?.internalRef ?? '';
      if (orders.has(order)) perOrder.set(order, (perOrder.get(order) ?? 0) + 1);
    }
    const notOne = [...orders].filter((order) => perOrder.get(order) !== 1);

    // The status topic: one payment.created per order (at-least-once copies share an eventId).
    const created = new Map<string, Set<string>>();
    for (const record of await readTopicToEnd(this.cluster.brokers, this.topics.status)) {
      const value = JSON.parse(record.value) as {
        eventId?: string;
        type?: string;
        orderId?: string;
      };
      if (value.type !== 'payment.created' || value.orderId === undefined) continue;
      const ids = created.get(value.orderId) ?? new Set<string>();
      ids.add(value.eventId ?? '');
      created.set(value.orderId, ids);
    }
    const createdNotOne = [...orders].filter((order) => created.get(order)?.size !== 1);

    // Postgres: no dead letter, no attempt left open or ever in doubt, an empty outbox.
    const [counts] = await this.query<{
      dead_letters: number;
      attempts_in_doubt: number;
      attempts_resolved: number;
      attempts_open: number;
      payments_in_doubt: number;
      outbox_pending: number;
    }>(
      `SELECT (SELECT count(*)::int FROM dead_letters) AS dead_letters,
              (SELECT count(*)::int FROM command_attempts WHERE state = 'in_doubt')
                AS attempts_in_doubt,
              (SELECT count(*)::int FROM command_attempts WHERE state = 'resolved')
                AS attempts_resolved,
              (SELECT count(*)::int FROM command_attempts WHERE state = 'started')
                AS attempts_open,
              (SELECT count(*)::int FROM payments WHERE state = 'in_doubt') AS payments_in_doubt,
              (SELECT count(*)::int FROM outbox WHERE published_at IS NULL) AS outbox_pending`,
    );
    expect({
      open,
      ordersWithoutExactlyOnePayment: notOne.slice(0, 10),
      ordersWithoutExactlyOnePaymentCreated: createdNotOne.slice(0, 10),
      ...counts,
      problems: report.problems,
    }).toEqual({
      open: 0,
      ordersWithoutExactlyOnePayment: [],
      ordersWithoutExactlyOnePaymentCreated: [],
      dead_letters: 0,
      attempts_in_doubt: 0,
      attempts_resolved: 0,
      attempts_open: 0,
      payments_in_doubt: 0,
      outbox_pending: 0,
      problems: [],
    });
    expect(report.tookEffect).toBe(events.length);
  }
}

/** An empty database (no migrations run), for a worker to migrate. */
async function emptyDatabase(label: string): Promise<TestDatabase> {
  const name = `pfb_test_${label.replace(/[^a-z0-9]+/g, '_')}_${randomBytes(4).toString('hex')}`;
  await withAdminClient(async (client) => {
    await client.query(`CREATE DATABASE "${name}"`);
  });
  return {
    name,
    url: databaseUrl(name),
    drop: () =>
      withAdminClient(async (client) => {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      }),
  };
}

/** Level >= 50 lines (error, fatal) a worker wrote: none is expected in these tests. */
export function errorsOf(worker: WorkerProcess): string[] {
  return worker.problems.filter((problem) => problem.level >= 50).map((problem) => problem.line);
}
