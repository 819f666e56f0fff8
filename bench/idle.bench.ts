/**
 * `npm run bench:idle`: what a worker costs when nothing happens. An idle replica should
 * cost next to nothing: three of them used to run ~100 Postgres transactions a second for
 * no traffic at all.
 *
 * A 1-node real Kafka (testbed/kafka) with the contract's topics, a fresh database, the
 * Payflow sandbox as a child process and the worker (the real `node dist/src/main.js`,
 * configured through its environment only). After a warm-up (BENCH_IDLE_WARMUP_SECONDS,
 * 15: the group join, the first relay and settlement passes), the bench measures over
 * BENCH_IDLE_SECONDS (60), with no event produced and no webhook sent:
 * - the worker's CPU (user + system from /proc), in percent of one core;
 * - the database's transactions (pg_stat_database xact_commit + xact_rollback; the
 *   statistics lag ~0.5 s, so the bench waits 1 s at each end), per second.
 * Targets (issue 12): under 1 % of a core and under 1 transaction per second.
 * Results: bench/results/idle.json. BENCH_IDLE_CPU_PROF_DIR=DIR writes a V8 CPU profile of
 * the idle worker there (Node refuses `--cpu-prof` in NODE_OPTIONS, so it is a node argument).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTopicsAndWait } from '../src/messaging/kafka/kafka.topics.js';
import { KraftCluster } from '../testbed/kafka/kraft-cluster.js';
import { WorkerProcess } from '../testbed/worker-process.js';
import { benchDatabaseName, dropDatabase, freshDatabase } from './pipeline/database.js';
import { benchKafka, extraWorkerEnv } from './pipeline/load.js';
import { cpuSeconds } from './pipeline/proc.js';
import { startSandboxChild } from './sandbox.bench.js';

const TARGET_CPU_PCT = 1;
const TARGET_TX_PER_SECOND = 1;

function seconds(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number, decimals: number): number =>
  Math.round(value * 10 ** decimals) / 10 ** decimals;

async function transactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ total: string }>(
      `SELECT (xact_commit + xact_rollback)::text AS total
         FROM pg_stat_database WHERE datname = current_database()`,
    );
    return Number(rows[0]?.total ?? 0);
  } finally {
    await client.end();
  }
}

export interface IdleResult {
  readonly at: string;
  readonly node: string;
  readonly warmupSeconds: number;
  readonly seconds: number;
  readonly workerCpuPct: number;
  readonly transactionsPerSecond: number;
  /** Transactions counted in the window, this bench's own two statistics reads included. */
  readonly transactions: number;
  readonly targets: { readonly cpuPct: number; readonly transactionsPerSecond: number };
  readonly met: { readonly cpu: boolean; readonly transactions: boolean };
}

async function main(): Promise<void> {
  const warmupSeconds = seconds('BENCH_IDLE_WARMUP_SECONDS', 15);
  const windowSeconds = seconds('BENCH_IDLE_SECONDS', 60);
  const label = 'idle';
  const cpuProfileDir = process.env.BENCH_IDLE_CPU_PROF_DIR || undefined;
  const dbName = benchDatabaseName(label);
  const databaseUrl = await freshDatabase(dbName);
  const cluster = await KraftCluster.start({ nodes: 1 });
  const sandbox = await startSandboxChild();
  let worker: WorkerProcess | undefined;
  try {
    const topics = {
      orders: 'erp.orders.v1',
      status: 'payflow.payment-status.v1',
      settlements: 'payflow.settlements.v1',
    };
    const admin = benchKafka(cluster.brokers, 'bench-idle-admin').admin();
    await admin.connect();
    try {
      await createTopicsAndWait(admin, [
        { topic: topics.orders, numPartitions: 12, replicationFactor: 1 },
        { topic: `${topics.orders}.dlq`, numPartitions: 12, replicationFactor: 1 },
        { topic: topics.status, numPartitions: 12, replicationFactor: 1 },
        { topic: topics.settlements, numPartitions: 6, replicationFactor: 1 },
      ]);
    } finally {
      await admin.disconnect();
    }
    worker = await WorkerProcess.start({
      env: {
        NODE_ENV: 'production',
        LOG_LEVEL: 'info',
        DATABASE_URL: databaseUrl,
        KAFKA_BROKERS: cluster.bootstrapServers,
        KAFKA_GROUP_ID: `payflow-bridge-idle-${randomUUID().slice(0, 8)}`,
        TOPIC_ORDERS: topics.orders,
        TOPIC_PAYMENT_STATUS: topics.status,
        TOPIC_SETTLEMENTS: topics.settlements,
        PAYFLOW_BASE_URL: sandbox.url,
        PAYFLOW_PARTNER_BASE_URL: sandbox.partnerUrl,
        PAYFLOW_CLIENT_ID: 'sandbox-client',
        PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
        WEBHOOK_PUBLIC_BASE_URL: 'https://127.0.0.1:3443',
        HTTP_PORT: '0',
        HTTP_HOST: '127.0.0.1',
        MANAGEMENT_PORT: '0',
        MANAGEMENT_HOST: '127.0.0.1',
        ...extraWorkerEnv(),
      },
      ...(cpuProfileDir === undefined ? {} : { cpuProfileDir }),
    });
    process.stdout.write(`worker ${worker.pid} consuming; warming up ${warmupSeconds} s\n`);
    await sleep(warmupSeconds * 1000);
    await sleep(1_000);
    const cpuStart = cpuSeconds(worker.pid) ?? 0;
    const txStart = await transactions(databaseUrl);
    const started = performance.now();
    await sleep(windowSeconds * 1000);
    const cpuEnd = cpuSeconds(worker.pid) ?? 0;
    const elapsed = (performance.now() - started) / 1000;
    await sleep(1_000);
    const txEnd = await transactions(databaseUrl);
    const workerCpuPct = round(((cpuEnd - cpuStart) / elapsed) * 100, 2);
    const counted = txEnd - txStart;
    const transactionsPerSecond = round(counted / elapsed, 2);
    const result: IdleResult = {
      at: new Date().toISOString(),
      node: process.version,
      warmupSeconds,
      seconds: round(elapsed, 1),
      workerCpuPct,
      transactionsPerSecond,
      transactions: counted,
      targets: { cpuPct: TARGET_CPU_PCT, transactionsPerSecond: TARGET_TX_PER_SECOND },
      met: {
        cpu: workerCpuPct < TARGET_CPU_PCT,
        transactions: transactionsPerSecond < TARGET_TX_PER_SECOND,
      },
    };
    const lines = [
      `idle worker over ${result.seconds} s: CPU ${workerCpuPct} % of a core (target < ${TARGET_CPU_PCT}), ` +
        `${transactionsPerSecond} Postgres transactions/s (${counted}; target < ${TARGET_TX_PER_SECOND})`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
    await mkdir(dir, { recursive: true });
    await writeFile(`${dir}idle.json`, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`wrote ${dir}idle.json\n`);
  } finally {
    await worker?.stop().catch(() => undefined);
    await sandbox.stop();
    await cluster.stop();
    await dropDatabase(dbName).catch(() => undefined);
  }
}

await main();
