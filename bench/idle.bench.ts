/**
 * `npm run bench:idle`: what a worker costs when nothing happens. An idle replica should
 * cost next to nothing: three of them used to run ~100 Postgres transactions a second for
 * no traffic at all.
 *
 * A 1-node real Kafka (testbed/kafka) with the contract's topics, a fresh database, the
 * Payflow sandbox as a child process and the worker (the real `node dist/src/main.js`,
 * configured through its environment only). After a warm-up (BENCH_IDLE_WARMUP_SECONDS,
 * 15: the group join, the first relay and settlement passes), the bench measures
 * BENCH_IDLE_RUNS (3) consecutive windows of BENCH_IDLE_SECONDS (60) each, with no event
 * produced and no webhook sent, and reports each window and their median:
 * - the worker's CPU (user + system from /proc), in percent of one core;
 * - the database's transactions (pg_stat_database xact_commit + xact_rollback; the
 *   statistics lag ~0.5 s, so the bench waits 1 s at each end), per second.
 * Targets (issue 12): under 1 % of a core and under 1 transaction per second.
 *
 * Side by side: BENCH_IDLE_BASE_MAIN=/path/to/other/dist/src/main.js starts a second worker
 * from another build (e.g. HEAD built in a git worktree) next to this one, on the same
 * Kafka and sandbox, each with its own database and consumer group, measured over the same
 * windows, so that the machine's noise hits both alike; the report gives both medians and
 * their ratio. BENCH_WORKER_MAIN replaces this build's entry point. BENCH_IDLE_BASE_ENV
 * (`NAME=value,…`) and BENCH_IDLE_BASE_NODE_ARGS give the second worker settings and node
 * arguments of its own (alone, they run this build twice: e.g. HEAP_GROWTH_PERCENT=0
 * against the default). BENCH_IDLE_LOG_DIR keeps each
 * worker's output (this.log, base.log).
 * Results: bench/results/idle.json. BENCH_IDLE_CPU_PROF_DIR=DIR writes a V8 CPU profile of
 * each idle worker there, under DIR/this and DIR/base (Node refuses `--cpu-prof` in
 * NODE_OPTIONS, so it is a node argument); BENCH_IDLE_NODE_ARGS adds node arguments to both
 * workers (e.g. `--perf-basic-prof` to read their JIT frames with `perf record -p PID`).
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTopicsAndWait } from '../src/messaging/kafka/kafka.topics.js';
import { KraftCluster } from '../testbed/kafka/kraft-cluster.js';
import { WorkerProcess, builtWorkerMain } from '../testbed/worker-process.js';
import { benchDatabaseName, dropDatabase, freshDatabase } from './pipeline/database.js';
import { benchKafka, extraWorkerEnv } from './pipeline/load.js';
import { cpuSeconds, machineCpuSeconds } from './pipeline/proc.js';
import { startSandboxChild } from './sandbox.bench.js';

const TARGET_CPU_PCT = 1;
const TARGET_TX_PER_SECOND = 1;

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const round = (value: number, decimals: number): number =>
  Math.round(value * 10 ** decimals) / 10 ** decimals;

/** The median of a non-empty list (the mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle] as number;
  return ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** `NAME=value,NAME=value` (as BENCH_WORKER_ENV) into an environment. */
function envList(raw: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const index = pair.indexOf('=');
    if (index > 0) env[pair.slice(0, index).trim()] = pair.slice(index + 1).trim();
  }
  return env;
}

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

export interface IdleWindow {
  readonly seconds: number;
  readonly workerCpuPct: number;
  readonly transactionsPerSecond: number;
  /** Transactions counted in the window, this bench's own two statistics reads included. */
  readonly transactions: number;
}

export interface IdleBuild {
  readonly main: string;
  /** What this worker got beyond the common environment (BENCH_IDLE_BASE_ENV, node args). */
  readonly env: Readonly<Record<string, string>>;
  readonly nodeArgs: readonly string[];
  readonly windows: readonly IdleWindow[];
  /** Medians over the windows. */
  readonly workerCpuPct: number;
  readonly transactionsPerSecond: number;
  readonly met: { readonly cpu: boolean; readonly transactions: boolean };
}

export interface IdleResult {
  readonly at: string;
  readonly node: string;
  readonly warmupSeconds: number;
  readonly windowSeconds: number;
  readonly runs: number;
  readonly targets: { readonly cpuPct: number; readonly transactionsPerSecond: number };
  /** This build (or BENCH_WORKER_MAIN). */
  readonly this: IdleBuild;
  /** The other build measured side by side (BENCH_IDLE_BASE_MAIN), if any. */
  readonly base?: IdleBuild;
  /** Median CPU of this build over the base's, when both ran. */
  readonly cpuRatio?: number;
  /** Machine-wide busy share during the windows (0-100 % of all cores): how noisy it was. */
  readonly machineBusyPct: readonly number[];
}

interface Subject {
  readonly name: 'this' | 'base';
  readonly main: string;
  readonly env: Readonly<Record<string, string>>;
  readonly nodeArgs: readonly string[];
  readonly dbName: string;
  databaseUrl: string;
  worker?: WorkerProcess;
  readonly windows: IdleWindow[];
}

function summarize(subject: Subject): IdleBuild {
  const workerCpuPct = round(median(subject.windows.map((w) => w.workerCpuPct)), 2);
  const transactionsPerSecond = round(
    median(subject.windows.map((w) => w.transactionsPerSecond)),
    2,
  );
  return {
    main: subject.main,
    env: subject.env,
    nodeArgs: subject.nodeArgs,
    windows: subject.windows,
    workerCpuPct,
    transactionsPerSecond,
    met: {
      cpu: workerCpuPct < TARGET_CPU_PCT,
      transactions: transactionsPerSecond < TARGET_TX_PER_SECOND,
    },
  };
}

async function main(): Promise<void> {
  const warmupSeconds = positive('BENCH_IDLE_WARMUP_SECONDS', 15);
  const windowSeconds = positive('BENCH_IDLE_SECONDS', 60);
  const runs = Math.round(positive('BENCH_IDLE_RUNS', 3));
  const cpuProfileDir = process.env.BENCH_IDLE_CPU_PROF_DIR || undefined;
  const thisMain = process.env.BENCH_WORKER_MAIN || builtWorkerMain();
  const baseEnv = envList(process.env.BENCH_IDLE_BASE_ENV);
  const baseNodeArgs = (process.env.BENCH_IDLE_BASE_NODE_ARGS ?? '')
    .split(' ')
    .filter((arg) => arg !== '');
  const baseMain =
    process.env.BENCH_IDLE_BASE_MAIN ||
    (Object.keys(baseEnv).length > 0 || baseNodeArgs.length > 0 ? thisMain : undefined);
  const logDir = process.env.BENCH_IDLE_LOG_DIR || undefined;
  if (logDir !== undefined) await mkdir(logDir, { recursive: true });
  const nodeArgs = (process.env.BENCH_IDLE_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const subjects: Subject[] = [
    {
      name: 'this',
      env: {},
      nodeArgs,
      main: thisMain,
      dbName: benchDatabaseName('idle'),
      databaseUrl: '',
      windows: [],
    },
  ];
  if (baseMain !== undefined)
    subjects.push({
      name: 'base',
      env: baseEnv,
      nodeArgs: [...nodeArgs, ...baseNodeArgs],
      main: baseMain,
      dbName: benchDatabaseName('idle-base'),
      databaseUrl: '',
      windows: [],
    });
  for (const subject of subjects) subject.databaseUrl = await freshDatabase(subject.dbName);
  const cluster = await KraftCluster.start({ nodes: 1 });
  const sandbox = await startSandboxChild();
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
    for (const subject of subjects) {
      subject.worker = await WorkerProcess.start({
        main: subject.main,
        nodeArgs: [...subject.nodeArgs],
        env: {
          NODE_ENV: 'production',
          LOG_LEVEL: 'info',
          DATABASE_URL: subject.databaseUrl,
          KAFKA_BROKERS: cluster.bootstrapServers,
          KAFKA_GROUP_ID: `payflow-bridge-idle-${subject.name}-${randomUUID().slice(0, 8)}`,
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
          ...subject.env,
        },
        ...(logDir === undefined ? {} : { logFile: join(logDir, `${subject.name}.log`) }),
        ...(cpuProfileDir === undefined
          ? {}
          : { cpuProfileDir: join(cpuProfileDir, subject.name) }),
      });
      process.stdout.write(`${subject.name}: worker ${subject.worker.pid} consuming\n`);
    }
    process.stdout.write(
      `warming up ${warmupSeconds} s, then ${runs} windows of ${windowSeconds} s\n`,
    );
    await sleep(warmupSeconds * 1000);
    await sleep(1_000);
    const machineBusyPct: number[] = [];
    for (let run = 0; run < runs; run += 1) {
      const cpuStart = subjects.map((s) => cpuSeconds(s.worker?.pid ?? 0) ?? 0);
      const txStart = await Promise.all(subjects.map((s) => transactions(s.databaseUrl)));
      const machineStart = machineCpuSeconds();
      const started = performance.now();
      await sleep(windowSeconds * 1000);
      const cpuEnd = subjects.map((s) => cpuSeconds(s.worker?.pid ?? 0) ?? 0);
      const machineEnd = machineCpuSeconds();
      const elapsed = (performance.now() - started) / 1000;
      await sleep(1_000);
      const txEnd = await Promise.all(subjects.map((s) => transactions(s.databaseUrl)));
      const machineTotal = machineEnd.total - machineStart.total;
      machineBusyPct.push(
        round(
          machineTotal <= 0 ? 0 : ((machineEnd.busy - machineStart.busy) / machineTotal) * 100,
          1,
        ),
      );
      subjects.forEach((subject, i) => {
        const counted = (txEnd[i] ?? 0) - (txStart[i] ?? 0);
        const window: IdleWindow = {
          seconds: round(elapsed, 1),
          workerCpuPct: round((((cpuEnd[i] ?? 0) - (cpuStart[i] ?? 0)) / elapsed) * 100, 2),
          transactionsPerSecond: round(counted / elapsed, 2),
          transactions: counted,
        };
        subject.windows.push(window);
        process.stdout.write(
          `window ${run + 1}/${runs} ${subject.name}: CPU ${window.workerCpuPct} % of a core, ` +
            `${window.transactionsPerSecond} Postgres transactions/s (${counted})` +
            ` [machine busy ${machineBusyPct[run]} %]\n`,
        );
      });
    }
    const [thisSubject, baseSubject] = subjects as [Subject, Subject | undefined];
    const thisBuild = summarize(thisSubject);
    const baseBuild = baseSubject === undefined ? undefined : summarize(baseSubject);
    const result: IdleResult = {
      at: new Date().toISOString(),
      node: process.version,
      warmupSeconds,
      windowSeconds,
      runs,
      targets: { cpuPct: TARGET_CPU_PCT, transactionsPerSecond: TARGET_TX_PER_SECOND },
      this: thisBuild,
      ...(baseBuild === undefined
        ? {}
        : {
            base: baseBuild,
            cpuRatio:
              baseBuild.workerCpuPct > 0
                ? round(thisBuild.workerCpuPct / baseBuild.workerCpuPct, 2)
                : 0,
          }),
      machineBusyPct,
    };
    const lines = [
      `idle worker, median of ${runs} x ${windowSeconds} s: CPU ${thisBuild.workerCpuPct} % of a core ` +
        `(target < ${TARGET_CPU_PCT}), ${thisBuild.transactionsPerSecond} Postgres transactions/s ` +
        `(target < ${TARGET_TX_PER_SECOND})`,
    ];
    if (baseBuild !== undefined)
      lines.push(
        `base build, same windows: CPU ${baseBuild.workerCpuPct} % of a core, ` +
          `${baseBuild.transactionsPerSecond} transactions/s; CPU ratio this/base ${result.cpuRatio}`,
      );
    process.stdout.write(`${lines.join('\n')}\n`);
    const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
    await mkdir(dir, { recursive: true });
    const file = process.env.BENCH_IDLE_RESULT_FILE || 'idle.json';
    await writeFile(`${dir}${file}`, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`wrote ${dir}${file}\n`);
  } finally {
    for (const subject of subjects) await subject.worker?.stop().catch(() => undefined);
    await sandbox.stop();
    await cluster.stop();
    for (const subject of subjects) await dropDatabase(subject.dbName).catch(() => undefined);
  }
}

await main();
