/**
 * One step of the scale bench: N workers in one consumer group on fresh topics (12
 * partitions), a fresh database behind a counting proxy (pg-counter.ts) and a fresh
 * sandbox at a fixed latency. A backlog of orders is produced once the group is stable and
 * timed to its last payment.created; then, under a steady load, a worker joins, one is
 * SIGKILLed and (with two or more left) one leaves with SIGTERM, each timed until its
 * partitions were consumed again. Last, the sandbox's payments are counted per order.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTopicsAndWait } from '../../src/messaging/kafka/kafka.topics.js';
import type { KraftCluster } from '../../testbed/kafka/kraft-cluster.js';
import { allSandboxPayments } from '../../testbed/sandbox-pages.js';
import { startSandboxChild } from '../sandbox.bench.js';
import {
  benchDatabaseName,
  BENCH_POSTGRES,
  freshDatabase,
  migrateDatabase,
} from '../pipeline/database.js';
import { benchKafka, EventProducer, paymentRequests, StatusReader } from '../pipeline/load.js';
import { cpuSeconds, machineCpuSeconds, postgresCpuSeconds } from '../pipeline/proc.js';
import { partitionOfKey } from './consumed-again.js';
import { CORES, deadLetters, limitOf, pgStats, round } from './figures.js';
import { WorkerGroup, type MembershipChange } from './group.js';
import { PacedSender } from './paced-sender.js';
import { PgCounter } from './pg-counter.js';

export const PARTITIONS = 12;

export interface StepSettings {
  readonly workers: number;
  readonly events: number;
  readonly latencyMs: number;
  readonly pacedRate: number;
  readonly maxInFlight: number;
  readonly dbPoolSize: number;
  /** KAFKA_SESSION_TIMEOUT for the workers; undefined: the worker's default. */
  readonly sessionTimeout: string | undefined;
}

export interface PerWorker {
  readonly name: string;
  readonly processed: number;
  readonly ordersPerSecond: number;
  readonly cpuPct: number;
}

export interface StepResult {
  readonly workers: number;
  readonly events: number;
  readonly completed: number;
  readonly durationMs: number;
  readonly ordersPerSecond: number;
  readonly ordersPerSecondPerWorker: number;
  readonly perWorker: readonly PerWorker[];
  readonly cpuPct: {
    readonly workers: number;
    readonly postgres: number;
    readonly brokers: number;
    readonly sandbox: number;
    /** This bench process (producer, status reader, proxy). */
    readonly bench: number;
    /** Everything else on the machine (other programs): above 15 the step was disturbed. */
    readonly other: number;
    /** Percent of all cores. */
    readonly machineBusy: number;
  };
  /** CPU milliseconds per order, by process: what the 2 cores can carry. */
  readonly cpuMsPerOrder: {
    readonly workers: number;
    readonly postgres: number;
    readonly brokers: number;
    readonly sandbox: number;
    readonly bench: number;
    readonly total: number;
  };
  /** 2 cores / total CPU ms per order: the orders/s at which this host's CPU runs out. */
  readonly cpuCeilingOrdersPerSecond: number;
  /** Postgres's work per order at the steady rate of the membership changes (small batches). */
  readonly steady: {
    readonly rate: number;
    readonly transactionsPerOrder: number;
    readonly statementsPerOrder: number;
    readonly roundTripsPerOrder: number;
  };
  /** Why the step does not count as quiet, or null. */
  readonly disturbed: string | null;
  readonly postgres: {
    readonly transactionsPerOrder: number;
    readonly rollbacksPerOrder: number;
    readonly statementsPerOrder: number;
    readonly roundTripsPerOrder: number;
    readonly rowsWrittenPerOrder: number;
    readonly cpuMsPerOrder: number;
    readonly peakConnections: number;
    readonly connectionsOpened: number;
  };
  readonly limitedBy: string;
  readonly changes: readonly MembershipChange[];
  readonly duplicates: {
    readonly orders: number;
    readonly ordersWithOnePayment: number;
    readonly ordersWithMoreThanOne: number;
    readonly ordersWithoutPayment: number;
    /** Of those, dead-lettered in doubt (a SIGKILL between the call and its outcome). */
    readonly ordersWithoutPaymentInDoubt: number;
    readonly deadLettersInDoubt: number;
    readonly deadLettersOther: number;
    readonly duplicateStatusEvents: number;
  };
  readonly workerExitCodes: readonly (number | null)[];
  readonly problems: readonly string[];
}

export async function runStep(
  cluster: KraftCluster,
  settings: StepSettings,
  log: (line: string) => void,
): Promise<StepResult> {
  const problems: string[] = [];
  const label = `scale-${settings.workers}w`;
  const databaseUrl = await freshDatabase(benchDatabaseName(label));
  await migrateDatabase(databaseUrl);
  const counter = await PgCounter.start({ host: '127.0.0.1', port: 5432 });
  const countedUrl = databaseUrl.replace(
    BENCH_POSTGRES,
    `postgres://postgres@127.0.0.1:${counter.port}`,
  );
  const prefix = `${label}-${randomUUID().slice(0, 8)}`;
  const topics = {
    orders: `${prefix}.erp.orders.v1`,
    dlq: `${prefix}.erp.orders.v1.dlq`,
    status: `${prefix}.payflow.payment-status.v1`,
    settlements: `${prefix}.payflow.settlements.v1`,
  };
  const replication = Math.min(3, cluster.nodes.length);
  const kafka = benchKafka(cluster.brokers, `bench-${label}`);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsAndWait(admin, [
      { topic: topics.orders, numPartitions: PARTITIONS, replicationFactor: replication },
      { topic: topics.dlq, numPartitions: PARTITIONS, replicationFactor: replication },
      { topic: topics.status, numPartitions: PARTITIONS, replicationFactor: replication },
      { topic: topics.settlements, numPartitions: 6, replicationFactor: replication },
    ]);
  } finally {
    await admin.disconnect();
  }
  const sandbox = await startSandboxChild({ latencyMs: settings.latencyMs });
  const groupId = `payflow-bridge-${prefix}`;
  const env = (): Record<string, string> => ({
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    DATABASE_URL: countedUrl,
    DB_POOL_SIZE: String(settings.dbPoolSize),
    KAFKA_BROKERS: cluster.bootstrapServers,
    KAFKA_GROUP_ID: groupId,
    ...(settings.sessionTimeout === undefined
      ? {}
      : { KAFKA_SESSION_TIMEOUT: settings.sessionTimeout }),
    TOPIC_ORDERS: topics.orders,
    TOPIC_PAYMENT_STATUS: topics.status,
    TOPIC_SETTLEMENTS: topics.settlements,
    MAX_IN_FLIGHT: String(settings.maxInFlight),
    PAYFLOW_BASE_URL: sandbox.url,
    PAYFLOW_PARTNER_BASE_URL: sandbox.partnerUrl,
    PAYFLOW_CLIENT_ID: 'sandbox-client',
    PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
    PAYFLOW_MAX_CONNECTIONS: String(settings.maxInFlight),
    WEBHOOK_PUBLIC_BASE_URL: 'https://127.0.0.1:3443',
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    SETTLEMENT_ENABLED: 'false',
  });
  const logDir = mkdtempSync(join(tmpdir(), `pfb-${label}-`));
  const group = new WorkerGroup(env, logDir, PARTITIONS);
  const reader = await StatusReader.start(kafka, topics.status, topics.dlq);
  const producer = await EventProducer.start(kafka, topics.orders);
  const sender = await PacedSender.start(kafka, topics.orders);
  const partitionOf = new Map<string, number>();
  const remember = (events: readonly { eventId: string; orderId: string }[]): void => {
    for (const event of events)
      partitionOf.set(event.eventId, partitionOfKey(event.orderId, PARTITIONS));
  };
  const brokerPids = cluster.nodes.flatMap((node) => (node.pid === null ? [] : [node.pid]));
  const sumCpu = (pids: readonly number[]): number =>
    pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
  try {
    // ---- N workers, a stable group
    const members = await group.start(settings.workers);
    if (!(await group.waitStable(60_000))) problems.push('the group did not settle within 60 s');
    log(
      `  ${settings.workers} worker(s) consuming: ${members.map((m) => `${m.name}=${group.held(m).join(',')}`).join(' ')}`,
    );

    // ---- throughput: a backlog produced at once, timed to its last payment.created
    const events = paymentRequests({
      prefix: `${prefix}-B`,
      orders: settings.events,
      perOrder: 1,
      seed: settings.workers,
    });
    remember(events);
    const processedBefore = await Promise.all(
      members.map((m) => m.worker.metric('payflow_bridge_order_events_processed_total')),
    );
    const workerCpu0 = members.map((m) => cpuSeconds(m.worker.pid) ?? 0);
    const pg0 = await pgStats(databaseUrl);
    const counts0 = counter.counts();
    counter.resetPeak();
    const cpu0 = {
      pg: postgresCpuSeconds(),
      brokers: sumCpu(brokerPids),
      sandbox: cpuSeconds(sandbox.pid) ?? 0,
      bench: process.cpuUsage(),
      machine: machineCpuSeconds(),
    };
    const t0 = performance.now();
    await producer.sendAll(events);
    const finished = await reader.waitFor(
      () => reader.created.size >= events.length || reader.deadLetters > 0,
      t0 + 180_000,
    );
    const createdTimes = events
      .map((event) => reader.created.get(event.eventId))
      .filter((at): at is number => at !== undefined);
    const end = finished ? Math.max(t0, ...createdTimes) : performance.now();
    const seconds = (end - t0) / 1000;
    const cpu1 = {
      pg: postgresCpuSeconds(),
      brokers: sumCpu(brokerPids),
      sandbox: cpuSeconds(sandbox.pid) ?? 0,
      bench: process.cpuUsage(cpu0.bench),
      machine: machineCpuSeconds(),
    };
    const workerCpu1 = members.map((m) => cpuSeconds(m.worker.pid) ?? 0);
    const counts1 = counter.counts();
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // pg_stat_database lags ~0.5 s
    const pg1 = await pgStats(databaseUrl);
    const processedAfter = await Promise.all(
      members.map((m) => m.worker.metric('payflow_bridge_order_events_processed_total')),
    );
    if (!finished)
      problems.push(`throughput: ${createdTimes.length} of ${events.length} within 180 s`);
    const completed = createdTimes.length;
    const pct = (cpu: number): number => round((cpu / seconds) * 100, 1);
    const perWorker = members.map((member, index) => {
      const processed = (processedAfter[index] ?? 0) - (processedBefore[index] ?? 0);
      return {
        name: member.name,
        processed,
        ordersPerSecond: round(processed / seconds),
        cpuPct: pct((workerCpu1[index] ?? 0) - (workerCpu0[index] ?? 0)),
      };
    });
    const machineTotal = cpu1.machine.total - cpu0.machine.total;
    const cpuPct: { -readonly [K in keyof StepResult['cpuPct']]: number } = {
      workers: round(
        perWorker.reduce((sum, w) => sum + w.cpuPct, 0),
        1,
      ),
      postgres: pct(cpu1.pg - cpu0.pg),
      brokers: pct(cpu1.brokers - cpu0.brokers),
      sandbox: pct(cpu1.sandbox - cpu0.sandbox),
      bench: pct((cpu1.bench.user + cpu1.bench.system) / 1e6),
      other: 0,
      machineBusy: round(
        ((cpu1.machine.busy - cpu0.machine.busy) / Math.max(1e-9, machineTotal)) * 100,
        1,
      ),
    };
    cpuPct.other = Math.max(
      0,
      round(
        cpuPct.machineBusy * CORES -
          (cpuPct.workers + cpuPct.postgres + cpuPct.brokers + cpuPct.sandbox + cpuPct.bench),
        1,
      ),
    );
    const msPerOrder = (percent: number): number =>
      round((percent * 10 * seconds) / Math.max(1, completed), 3);
    const cpuMsPerOrder = {
      workers: msPerOrder(cpuPct.workers),
      postgres: msPerOrder(cpuPct.postgres),
      brokers: msPerOrder(cpuPct.brokers),
      sandbox: msPerOrder(cpuPct.sandbox),
      bench: msPerOrder(cpuPct.bench),
      total: msPerOrder(
        cpuPct.workers + cpuPct.postgres + cpuPct.brokers + cpuPct.sandbox + cpuPct.bench,
      ),
    };
    const cpuCeilingOrdersPerSecond = round((CORES * 1000) / Math.max(1e-9, cpuMsPerOrder.total));
    const disturbed = cpuPct.other > 15 ? `other programs took ${cpuPct.other} % of a core` : null;
    const per = (value: number, decimals = 2): number =>
      round(value / Math.max(1, completed), decimals);
    const postgres = {
      transactionsPerOrder: per(pg1.commits - pg0.commits),
      rollbacksPerOrder: per(pg1.rollbacks - pg0.rollbacks),
      statementsPerOrder: per(counts1.statements - counts0.statements),
      roundTripsPerOrder: per(counts1.roundTrips - counts0.roundTrips),
      rowsWrittenPerOrder: per(pg1.written - pg0.written),
      cpuMsPerOrder: per((cpu1.pg - cpu0.pg) * 1000),
      peakConnections: counts1.peakConnections,
      connectionsOpened: counts1.connections,
    };
    const ordersPerSecond = round(completed / seconds);
    const limitedBy = limitOf(cpuPct, members.length, Math.max(...perWorker.map((w) => w.cpuPct)));
    log(
      `  throughput: ${completed} orders in ${round(seconds, 1)} s = ${ordersPerSecond}/s (${round(ordersPerSecond / members.length)}/s per worker); per worker ${perWorker.map((w) => `${w.name} ${w.ordersPerSecond}/s ${w.cpuPct} %`).join(', ')}`,
    );
    log(`  cpu %: ${JSON.stringify(cpuPct)}; postgres per order: ${JSON.stringify(postgres)}`);
    log(`  limited by: ${limitedBy}`);
    log(
      `  CPU ms per order: ${JSON.stringify(cpuMsPerOrder)}; CPU ceiling ${cpuCeilingOrdersPerSecond} orders/s${disturbed === null ? '' : `; DISTURBED: ${disturbed}`}`,
    );

    // ---- membership changes under a steady load
    const pool = paymentRequests({
      prefix: `${prefix}-P`,
      orders: settings.pacedRate * 200,
      perOrder: 1,
      seed: 100 + settings.workers,
    });
    remember(pool);
    let taken = 0;
    sender.run(settings.pacedRate, (count) => {
      const slice = pool.slice(taken, taken + count);
      taken += count;
      return slice;
    });
    // Postgres's work per order at a steady rate (small batches), over 6 s of it.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const steady0 = { pg: await pgStats(databaseUrl), counts: counter.counts(), sent: taken };
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const steady1 = { pg: await pgStats(databaseUrl), counts: counter.counts(), sent: taken };
    const steadyOrders = Math.max(1, steady1.sent - steady0.sent);
    const steady = {
      rate: settings.pacedRate,
      transactionsPerOrder: round((steady1.pg.commits - steady0.pg.commits) / steadyOrders, 2),
      statementsPerOrder: round(
        (steady1.counts.statements - steady0.counts.statements) / steadyOrders,
        2,
      ),
      roundTripsPerOrder: round(
        (steady1.counts.roundTrips - steady0.counts.roundTrips) / steadyOrders,
        2,
      ),
    };
    log(`  steady ${settings.pacedRate}/s: postgres per order ${JSON.stringify(steady)}`);
    const changes: MembershipChange[] = [];
    const note = (change: MembershipChange): void => {
      changes.push(change);
      log(
        `  ${change.kind} (${change.membersBefore} -> ${change.membersAfter}): partitions ${change.moved.join(',')}; rebalancing seen after ${change.toRebalanceMs ?? '-'} ms (group paused ${change.pauseMs ?? '-'} ms), assigned after ${change.toAssignedMs ?? '-'} ms, consumed again after ${change.toConsumedMs ?? '-'} ms${change.joinerStartMs === undefined ? '' : ` (joiner consuming after ${change.joinerStartMs} ms)`}`,
      );
    };
    note(await group.join(databaseUrl, partitionOf));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    note(await group.remove('kill', databaseUrl, partitionOf));
    if (group.live().length >= 2) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      note(await group.remove('term', databaseUrl, partitionOf));
    }
    await sender.stop();
    const pacedIds = sender.sent;
    const settled = await reader.waitFor(
      // Created, or dead-lettered (in doubt after a SIGKILL; counted below).
      () =>
        pacedIds.filter((event) => reader.created.has(event.eventId)).length + reader.deadLetters >=
        pacedIds.length,
      performance.now() + 90_000,
    );
    if (!settled)
      problems.push(
        `paced: ${pacedIds.filter((e) => reader.created.has(e.eventId)).length} of ${pacedIds.length} created (${reader.deadLetters} dead-lettered) within 90 s`,
      );
    const workerExitCodes = await group.stopAll();
    if (workerExitCodes.some((code) => code !== 0))
      problems.push(`worker exit codes ${workerExitCodes.join(',')}`);

    // ---- duplicates: the sandbox's payments per order (internalRef is the order id)
    const orders = new Set([...events, ...pacedIds].map((event) => event.orderId));
    const payments = await allSandboxPayments<{ body: { payment?: { internalRef?: string } } }>(
      sandbox.url,
    );
    const perOrder = new Map<string, number>();
    for (const payment of payments) {
      const ref = payment.body.payment?.internalRef;
      if (ref !== undefined && orders.has(ref)) perOrder.set(ref, (perOrder.get(ref) ?? 0) + 1);
    }
    const letters = await deadLetters(databaseUrl);
    const inDoubt = new Set(
      letters.filter((letter) => letter.reason === 'in_doubt').map((letter) => letter.order_id),
    );
    const missing = [...orders].filter((order) => !perOrder.has(order));
    const duplicates = {
      orders: orders.size,
      ordersWithOnePayment: [...perOrder.values()].filter((n) => n === 1).length,
      ordersWithMoreThanOne: [...perOrder.values()].filter((n) => n > 1).length,
      ordersWithoutPayment: missing.length,
      ordersWithoutPaymentInDoubt: missing.filter((order) => inDoubt.has(order)).length,
      deadLettersInDoubt: letters.filter((letter) => letter.reason === 'in_doubt').length,
      deadLettersOther: letters.filter((letter) => letter.reason !== 'in_doubt').length,
      duplicateStatusEvents: reader.duplicates,
    };
    if (duplicates.ordersWithMoreThanOne > 0)
      problems.push(`${duplicates.ordersWithMoreThanOne} order(s) with more than one payment`);
    // A SIGKILL mid-call leaves creations in doubt: dead-lettered for an operator, by design.
    if (duplicates.ordersWithoutPayment > duplicates.ordersWithoutPaymentInDoubt)
      problems.push(
        `${duplicates.ordersWithoutPayment - duplicates.ordersWithoutPaymentInDoubt} order(s) without a payment and not in doubt`,
      );
    if (duplicates.deadLettersOther > 0)
      problems.push(`${duplicates.deadLettersOther} dead letter(s) not in doubt`);
    log(`  duplicates: ${JSON.stringify(duplicates)}`);
    return {
      workers: settings.workers,
      events: events.length,
      completed,
      durationMs: round(seconds * 1000),
      ordersPerSecond,
      ordersPerSecondPerWorker: round(ordersPerSecond / members.length),
      perWorker,
      cpuPct,
      cpuMsPerOrder,
      cpuCeilingOrdersPerSecond,
      steady,
      disturbed,
      postgres,
      limitedBy,
      changes,
      duplicates,
      workerExitCodes,
      problems,
    };
  } finally {
    await sender.stop().catch(() => undefined);
    await group.killAll();
    await reader.stop().catch(() => undefined);
    await producer.stop().catch(() => undefined);
    await sandbox.stop();
    await counter.stop();
  }
}
