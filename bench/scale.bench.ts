/**
 * `npm run bench:scale`: many replicas, measured (issue 30 §3). On real Apache Kafka (a
 * KRaft cluster from testbed/kafka, BENCH_SCALE_KAFKA_NODES nodes, default 1: on a 2-core
 * host three broker JVMs take CPU from what is measured), with 12 partitions and the
 * Payflow sandbox at 100 ms, for 1, 2 and 4 workers (BENCH_SCALE_WORKERS) in one consumer
 * group: see bench/scale/step.ts for one step.
 *
 * Per step: orders/s in total and per worker (each worker's processed counter), the CPU of
 * the workers, Postgres, the brokers and the sandbox (/proc), Postgres's work per order
 * (transactions and rollbacks from pg_stat_database; statements and round trips counted by
 * a proxy in front of Postgres, bench/scale/pg-counter.ts, since pg_stat_statements is not
 * preloaded here; rows written), connections (the most open at once through the proxy),
 * what limits the step, and the time a membership change takes: a worker joins, one is
 * SIGKILLed (the coordinator notices after KAFKA_SESSION_TIMEOUT), one leaves with SIGTERM;
 * each measured from the change to the moment every partition that changed hands had an
 * attempt begun in the database ("consumed again"). Then the sandbox's payments are
 * counted per order: every order must have exactly one.
 *
 * Environment: BENCH_SCALE_WORKERS (1,2,4), BENCH_SCALE_EVENTS (orders of the backlog,
 * 10000), BENCH_SCALE_LATENCY_MS (100), BENCH_SCALE_PACED_RATE (orders/s during the changes,
 * 100), BENCH_SCALE_MAX_IN_FLIGHT (1024), BENCH_SCALE_DB_POOL (10), BENCH_SCALE_SESSION_TIMEOUT
 * (unset: the worker's default), BENCH_SCALE_KAFKA_NODES (1), BENCH_SCALE_QUIET_WAIT_S (30: how
 * long each step waits for a quiet machine), BENCH_RESULTS_DIR.
 * Results: bench/results/scale.json and scale.md. Run it under `flock /tmp/bench.lock`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { KraftCluster } from '../testbed/kafka/kraft-cluster.js';
import { machineBusyPercent } from './pipeline/proc.js';
import { scaleMarkdown } from './scale/report.js';
import { runStep, type StepResult, type StepSettings } from './scale/step.js';

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Waits (up to BENCH_SCALE_QUIET_WAIT_S, 30) for the machine to be under 20 % busy. */
async function waitForQuietMachine(): Promise<void> {
  const deadline = performance.now() + envNumber('BENCH_SCALE_QUIET_WAIT_S', 30) * 1000;
  let busy = await machineBusyPercent(1_000);
  while (busy >= 20 && performance.now() < deadline) {
    log(`  the machine is ${busy} % busy (something else runs); waiting`);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    busy = await machineBusyPercent(1_000);
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const steps = (process.env.BENCH_SCALE_WORKERS ?? '1,2,4')
    .split(',')
    .map((value) => Number(value.trim()))
    .filter((value) => Number.isInteger(value) && value > 0);
  const base: Omit<StepSettings, 'workers'> = {
    events: envNumber('BENCH_SCALE_EVENTS', 10_000),
    latencyMs: envNumber('BENCH_SCALE_LATENCY_MS', 100),
    pacedRate: envNumber('BENCH_SCALE_PACED_RATE', 100),
    maxInFlight: envNumber('BENCH_SCALE_MAX_IN_FLIGHT', 1024),
    dbPoolSize: envNumber('BENCH_SCALE_DB_POOL', 10),
    sessionTimeout: process.env.BENCH_SCALE_SESSION_TIMEOUT || undefined,
  };
  const nodes = envNumber('BENCH_SCALE_KAFKA_NODES', 1);
  const busyBefore = await machineBusyPercent(1_000);
  log(`machine busy before the bench: ${busyBefore} %`);
  log(`real Kafka: starting a ${nodes}-node KRaft cluster`);
  const cluster = await KraftCluster.start({ nodes, jit: 'full' });
  const results: StepResult[] = [];
  try {
    for (const workers of steps) {
      await waitForQuietMachine();
      log(`step: ${workers} worker(s), ${base.events} orders, sandbox ${base.latencyMs} ms`);
      const result = await runStep(cluster, { ...base, workers }, log);
      results.push(result);
      if (result.problems.length > 0) log(`  PROBLEMS: ${result.problems.join('; ')}`);
    }
  } finally {
    await cluster.stop();
  }
  const output = {
    name: 'scale: 1, 2, 4 workers in one consumer group on real Kafka',
    date: new Date().toISOString(),
    node: process.version,
    settings: { ...base, partitions: 12, kafkaNodes: nodes, steps },
    machineBusyBeforePct: busyBefore,
    totalSeconds: Math.round((performance.now() - started) / 100) / 10,
    steps: results,
  };
  const directory =
    process.env.BENCH_RESULTS_DIR === undefined
      ? fileURLToPath(new URL('../../bench/results/', import.meta.url))
      : `${process.env.BENCH_RESULTS_DIR.replace(/\/$/, '')}/`;
  await mkdir(directory, { recursive: true });
  await writeFile(`${directory}scale.json`, `${JSON.stringify(output, null, 2)}\n`);
  const text = scaleMarkdown(output);
  await writeFile(`${directory}scale.md`, text);
  log('');
  log(text);
  log(`wrote ${directory}scale.json and scale.md (${output.totalSeconds} s)`);
  if (results.some((result) => result.problems.length > 0)) process.exitCode = 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
