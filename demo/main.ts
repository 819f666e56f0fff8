/**
 * `npm run demo` (after scripts/demo.sh has installed what is missing and built): the whole
 * loop on this machine, as users run it.
 *
 * - Kafka: librdkafka's mock cluster in this process (the zero-setup default), or with
 *   DEMO_KAFKA=real a 1-node Apache Kafka 3.9.1 (KRaft) from testbed/kafka; the contract's
 *   topics either way.
 * - Payflow: the sandbox as a child process (`node dist/src/sandbox/main.js`).
 * - The worker as a child process (`node dist/src/main.js`), configured only through its
 *   environment, on a database of its own (payflow_bridge_demo, recreated every run).
 *
 * The worker's listener (webhooks, health, metrics) runs on HTTPS with a self-signed
 * certificate the demo makes; the sandbox trusts it (SANDBOX_WEBHOOK_CA_FILE) and sends its
 * webhooks to https://127.0.0.1:<port>.
 *
 * Before the worker starts, it books yesterday's settlements (UTC) in the sandbox and holds
 * the night's file back; the worker runs its nightly settlement cron every 2 s.
 *
 * Then it plays an ERP: publishes sample order events and reads the status, dead-letter and
 * settlements topics from the beginning. Once the payments exist, it plays the payer: pays
 * them in the sandbox (whose webhooks reach the worker, which publishes the status change),
 * books that money on yesterday's night and lets the file go; the cron's next tick pulls
 * it, and reconciles the night. It waits (at most DEMO_TIMEOUT_SECONDS, 60) for every
 * outcome it expects (the webhook-driven status events, the night's file event and all its
 * lines, its settlement.reconciled and its one settlement.exception included), prints one
 * screen of what happened, and stops the worker (SIGTERM: it drains), the sandbox and the
 * cluster. Exit 0 when everything arrived; 1 with the reason and the worker's log
 * otherwise; 130 after Ctrl-C, which stops everything at any time.
 */
import { createTopicsAndWait } from '../src/messaging/kafka/kafka.topics.js';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { KafkaMockCluster } from '../testbed/kafka/mock-cluster.js';
import { KAFKA_VERSION, KraftCluster } from '../testbed/kafka/kraft-cluster.js';
import { selfSignedTls } from '../testbed/tls.js';
import { DEMO_DATABASE, DemoDatabase, DemoDatabaseError, redact } from './database.js';
import { Observer, TOPICS, demoKafka, publish } from './kafka.js';
import {
  ChildService,
  freePorts,
  removePidFile,
  stopLeftovers,
  waitUntilUp,
  writePidFile,
} from './processes.js';
import { payerPays, type CreatedPayment, type Paid } from './payer.js';
import { demoOrders, type DemoOrder } from './scenario.js';
import {
  missingOutcomes,
  outcomesOf,
  renderScreen,
  styleFor,
  failedOutcomes,
  unanswered,
  type Outcome,
  type Placement,
} from './screen.js';
import {
  DEMO_SCHEDULE,
  bookPaid,
  demoNight,
  holdFiles,
  missingSettlements,
  nightResult,
  releaseFiles,
  seedNight,
  settlementProblems,
  settlementsOf,
  type DemoNight,
  type NightResult,
} from './settlements.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKER_SCRIPT = 'dist/src/main.js';
const SANDBOX_SCRIPT = 'dist/src/sandbox/main.js';
/** The demo's Kafka, whichever it is. */
interface DemoCluster {
  /** What the progress and the stop lines call it. */
  readonly name: string;
  /** What the screen's "where it ran" part calls it. */
  readonly screenName: string;
  readonly brokers: readonly string[];
  readonly bootstrapServers: string;
  /** Worker variables this Kafka needs beyond the defaults. */
  readonly workerEnv: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

const DEMO_TOPICS = [
  { name: TOPICS.orders, partitions: 12 },
  { name: TOPICS.dlq, partitions: 12 },
  { name: TOPICS.status, partitions: 12 },
  { name: TOPICS.settlements, partitions: 6 },
];

/** DEMO_KAFKA: `mock` (default: librdkafka's mock cluster) or `real` (KRaft from testbed/). */
function demoKafkaKind(): 'mock' | 'real' {
  const raw = process.env['DEMO_KAFKA'] ?? 'mock';
  if (raw === 'mock' || raw === 'real') return raw;
  throw new DemoFailure('DEMO_KAFKA must be mock (the default) or real');
}

async function startDemoCluster(kind: 'mock' | 'real'): Promise<DemoCluster> {
  if (kind === 'mock') {
    const cluster = await KafkaMockCluster.start({ brokers: 3, topics: DEMO_TOPICS });
    return {
      name: 'the Kafka mock cluster',
      screenName: 'librdkafka mock cluster',
      brokers: cluster.brokers,
      bootstrapServers: cluster.bootstrapServers,
      workerEnv: {
        // The mock has no controller to serve InitProducerId.
        KAFKA_PRODUCER_IDEMPOTENT: 'false',
        // The mock holds a rebalance for the session time-out minus 1 s.
        KAFKA_SESSION_TIMEOUT: '6s',
      },
      stop: () => cluster.stop(),
    };
  }
  const cluster = await KraftCluster.start({ nodes: 1 });
  try {
    const admin = demoKafka(cluster.brokers).admin();
    await admin.connect();
    try {
      await createTopicsAndWait(
        admin,
        DEMO_TOPICS.map(({ name, partitions }) => ({
          topic: name,
          numPartitions: partitions,
          replicationFactor: 1,
        })),
      );
    } finally {
      await admin.disconnect();
    }
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return {
    name: 'Apache Kafka',
    screenName: `Apache Kafka ${KAFKA_VERSION} (KRaft)`,
    brokers: cluster.brokers,
    bootstrapServers: cluster.bootstrapServers,
    workerEnv: { KAFKA_SESSION_TIMEOUT: '6s' },
    stop: () => cluster.stop(),
  };
}
/** The worker drains within 30 s (SHUTDOWN_DEADLINE_MS); a little more before SIGKILL. */
const WORKER_GRACE_MS = 35_000;
const SANDBOX_GRACE_MS = 5_000;

const SIGNAL_EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = {
  SIGHUP: 129,
  SIGINT: 130,
  SIGTERM: 143,
};

/** A step was cut short by Ctrl-C (or SIGTERM/SIGHUP). */
class Interrupted extends Error {}

/** Something expected did not happen; `message` says what, for the user. */
class DemoFailure extends Error {}

/** Progress on a terminal (one line, rewritten, gone before the screen); silent otherwise. */
class Progress {
  private shown = false;

  constructor(private readonly tty: boolean) {}

  step(text: string): void {
    if (!this.tty) return;
    process.stderr.write(`\r\u001b[2K  ${text}…`);
    this.shown = true;
  }

  clear(): void {
    if (!this.shown) return;
    process.stderr.write('\r\u001b[2K');
    this.shown = false;
  }
}

interface Resources {
  database?: DemoDatabase;
  cluster?: DemoCluster;
  observer?: Observer;
  sandbox?: ChildService;
  worker?: ChildService;
}

const progress = new Progress(process.stderr.isTTY === true);
const style = styleFor(process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined);
const resources: Resources = {};
let interrupted: NodeJS.Signals | null = null;

function checkpoint(): void {
  if (interrupted !== null) throw new Interrupted(interrupted);
}

function timeoutSeconds(): number {
  const raw = process.env['DEMO_TIMEOUT_SECONDS'];
  const value = raw === undefined || raw === '' ? 60 : Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new DemoFailure('DEMO_TIMEOUT_SECONDS must be a positive number of seconds');
  }
  return value;
}

async function run(stateDir: string, logs: { worker: string; sandbox: string }): Promise<void> {
  const started = Date.now();
  const timeoutMs = timeoutSeconds() * 1000;
  const pidFile = path.join(stateDir, 'pids.json');
  for (const script of [WORKER_SCRIPT, SANDBOX_SCRIPT]) {
    if (!existsSync(path.join(ROOT, script))) {
      throw new DemoFailure(`${script} is missing: run \`npm run build\` (npm run demo does)`);
    }
  }

  progress.step(`recreating the database ${DEMO_DATABASE}`);
  const server = process.env['DEMO_DATABASE_SERVER'] ?? 'postgres://postgres@127.0.0.1:5432';
  try {
    resources.database = await DemoDatabase.open(server);
  } catch (error) {
    if (error instanceof DemoDatabaseError) throw new DemoFailure(error.message);
    throw error;
  }
  // Holding the demo lock: whatever the pid file names belongs to a demo that is gone.
  const leftovers = await stopLeftovers(pidFile);
  if (leftovers > 0) {
    progress.clear();
    process.stderr.write(`demo: stopped ${leftovers} process(es) left by an earlier demo\n`);
  }
  checkpoint();

  const kafkaKind = demoKafkaKind();
  progress.step(
    kafkaKind === 'mock' ? 'starting the Kafka mock cluster' : 'starting Apache Kafka (KRaft)',
  );
  const cluster = await startDemoCluster(kafkaKind);
  resources.cluster = cluster;
  checkpoint();

  progress.step('starting the Payflow sandbox');
  // The worker's certificate, for localhost and 127.0.0.1: the worker serves its webhooks
  // with it and the sandbox trusts it as the webhooks' CA (/health is on the plain-HTTP
  // management port).
  const tls = await selfSignedTls();
  const tlsFiles = {
    cert: path.join(stateDir, 'worker-cert.pem'),
    key: path.join(stateDir, 'worker-key.pem'),
  };
  writeFileSync(tlsFiles.cert, tls.cert);
  writeFileSync(tlsFiles.key, tls.key, { mode: 0o600 });
  chmodSync(tlsFiles.key, 0o600); // `mode` applies only to a new file
  const [sandboxPort, workerPort, managementPort] = await freePorts(3);
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const basicEnv = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
  const sandbox = ChildService.start(
    'sandbox',
    SANDBOX_SCRIPT,
    {
      ...basicEnv,
      SANDBOX_PORT: String(sandboxPort),
      SANDBOX_HOST: '127.0.0.1',
      SANDBOX_LOG_LEVEL: 'warn',
      SANDBOX_WEBHOOK_CA_FILE: tlsFiles.cert,
      SANDBOX_WEBHOOK_WHITELIST: '127.0.0.1',
    },
    logs.sandbox,
    ROOT,
  );
  resources.sandbox = sandbox;
  writePidFile(pidFile, [sandbox]);
  const sandboxUp = await waitUntilUp(
    `${sandboxUrl}/sandbox/webhook-deliveries`,
    sandbox,
    20_000,
    () => interrupted !== null,
  );
  checkpoint();
  if (sandboxUp !== 'up') {
    throw new DemoFailure(
      `the sandbox did not come up (${sandboxUp === 'exited' ? sandbox.describeExit() : 'no answer in 20 s'}); see ${logs.sandbox}`,
    );
  }

  // Before the worker: yesterday's other rows, and the night's file held back until the
  // payer's payments are booked on it too (the cron's ticks until then leave it missing).
  const now = new Date();
  const orders = demoOrders(now);
  const night = demoNight(
    now,
    orders.flatMap((order) => (order.payer === undefined ? [] : [order.orderId])),
  );
  progress.step(`booking ${night.date}'s settlements in the sandbox`);
  let holdId: string;
  try {
    await seedNight(sandboxUrl, night);
    holdId = await holdFiles(sandboxUrl);
  } catch (error) {
    throw new DemoFailure(`could not book the settlements in the sandbox: ${errorText(error)}`);
  }
  checkpoint();

  progress.step('starting the worker and joining the topics');
  const workerUrl = `https://127.0.0.1:${workerPort}`;
  const managementUrl = `http://127.0.0.1:${managementPort}`;
  const worker = ChildService.start(
    'worker',
    WORKER_SCRIPT,
    {
      ...basicEnv,
      DATABASE_URL: resources.database.url,
      KAFKA_BROKERS: cluster.bootstrapServers,
      ...cluster.workerEnv,
      PAYFLOW_BASE_URL: sandboxUrl,
      PAYFLOW_PARTNER_BASE_URL: `${sandboxUrl}/partner`,
      PAYFLOW_CLIENT_ID: 'sandbox-client',
      PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
      WEBHOOK_PUBLIC_BASE_URL: workerUrl,
      TLS_CERT_FILE: tlsFiles.cert,
      TLS_KEY_FILE: tlsFiles.key,
      HTTP_PORT: String(workerPort),
      HTTP_HOST: '127.0.0.1',
      MANAGEMENT_PORT: String(managementPort),
      MANAGEMENT_HOST: '127.0.0.1',
      // The nightly settlement pull, every 2 s instead of 02:30 Europe/Oslo.
      SETTLEMENT_CRON: DEMO_SCHEDULE.cron,
      SETTLEMENT_TIMEZONE: DEMO_SCHEDULE.timeZone,
      LOG_LEVEL: 'warn',
    },
    logs.worker,
    ROOT,
  );
  resources.worker = worker;
  writePidFile(pidFile, [sandbox, worker]);
  const kafka = demoKafka(cluster.brokers);
  const observer = new Observer(kafka, 'payflow-bridge-demo-observer');
  resources.observer = observer;
  const [workerUp] = await Promise.all([
    waitUntilUp(`${managementUrl}/health/ready`, worker, 30_000, () => interrupted !== null),
    observer.start(),
  ]);
  checkpoint();
  if (workerUp !== 'up') {
    throw new DemoFailure(
      workerUp === 'exited'
        ? `the worker exited at start-up (${worker.describeExit()})`
        : 'the worker was not ready (GET /health/ready) within 30 s',
    );
  }

  progress.step(`publishing ${orders.length} ERP orders to ${TOPICS.orders}`);
  await publish(
    kafka,
    orders.flatMap((order) => order.messages),
  );

  const deadline = Date.now() + timeoutMs;
  const watching: Watching = { orders, night, observer, worker, deadline, timeoutMs };
  // The payer pays an order's payment once every ERP event of the order is answered.
  progress.step('waiting for the payments the payer pays');
  let seen = await watch(watching, (outcomes) =>
    payerOrders(orders).flatMap((order) => [
      ...(createdPayment(outcomes, order.orderId) === null
        ? [`${order.orderId}: payment.created`]
        : []),
      ...unanswered(order, outcomes).map(
        (message) => `${order.orderId}: an answer to ${message.summary}`,
      ),
    ]),
  );
  const paid: Paid[] = [];
  if (seen.problem === null) {
    progress.step('the payer pays; the sandbox sends the webhooks over HTTPS');
    try {
      for (const order of payerOrders(orders)) {
        const created = createdPayment(seen.outcomes, order.orderId);
        if (created === null || order.payer === undefined) continue;
        paid.push(await payerPays(sandboxUrl, order.payer, created));
      }
      // The sandbox retries a webhook after 5 minutes: one that failed now is a failed demo.
      const undelivered = paid.flatMap((payment) =>
        payment.webhooks
          .filter((webhook) => !webhook.delivered)
          .map(
            (webhook) =>
              `${payment.orderId} ${webhook.kind}: ${webhook.problem ?? `HTTP ${String(webhook.status)}`}`,
          ),
      );
      if (undelivered.length > 0) {
        throw new Error(`the worker did not take its webhooks: ${undelivered.join('; ')}`);
      }
      progress.step(`booking what the payer paid on ${night.date}; releasing the file`);
      await bookPaid(sandboxUrl, night, paid);
      await releaseFiles(sandboxUrl, holdId);
    } catch (error) {
      seen = { ...seen, problem: `the payer's step in the sandbox failed: ${errorText(error)}` };
    }
  }
  if (seen.problem === null) {
    progress.step('waiting for the status events, dead letters, settlements and reconciliation');
    seen = await watch(watching, (outcomes, settled) => [
      ...missingOutcomes(orders, outcomes),
      ...missingSettlements(night, settled),
    ]);
  }
  const { outcomes, settled, problem } = seen;

  const placement: Placement = {
    bootstrapServers: cluster.bootstrapServers,
    kafka: cluster.screenName,
    brokers: cluster.brokers.length,
    sandboxUrl,
    sandboxPid: sandbox.pid,
    workerPid: worker.pid,
    workerUrl,
    managementUrl,
    databaseUrl: redact(resources.database.url),
  };
  progress.clear();
  const screen = renderScreen({
    orders,
    outcomes,
    paid,
    settlements: { night, paid, result: settled },
    placement,
    elapsedMs: Date.now() - started,
    style,
  });
  process.stdout.write(`${screen.join('\n')}\n`);
  if (problem !== null) throw new DemoFailure(problem);
}

interface Watching {
  readonly orders: readonly DemoOrder[];
  readonly night: DemoNight;
  readonly observer: Observer;
  readonly worker: ChildService;
  readonly deadline: number;
  readonly timeoutMs: number;
}

interface Seen {
  readonly outcomes: Outcome[];
  readonly settled: NightResult;
  /** Why the demo cannot go on, or null. */
  readonly problem: string | null;
}

/**
 * Reads what came back until `missing` names nothing, something went wrong (an unexpected
 * outcome, a wrong settlement file, the worker or the demo's consumer stopped) or the
 * deadline passed.
 */
async function watch(
  watching: Watching,
  missing: (outcomes: readonly Outcome[], settled: NightResult) => string[],
): Promise<Seen> {
  const { orders, night, observer, worker, deadline, timeoutMs } = watching;
  for (;;) {
    checkpoint();
    const outcomes = outcomesOf(observer.messages);
    const settled = nightResult(settlementsOf(observer.messages), night);
    const seen = (problem: string | null): Seen => ({ outcomes, settled, problem });
    const failed = failedOutcomes(orders, outcomes);
    if (failed.length > 0) {
      return seen(`unexpected outcome(s): ${failed.map(describeOutcome).join('; ')}`);
    }
    const wrong = settlementProblems(night, settled);
    if (wrong.length > 0) return seen(wrong.join('; '));
    const still = missing(outcomes, settled);
    if (still.length === 0) return seen(null);
    if (!worker.running) {
      return seen(
        `the worker stopped (${worker.describeExit()}) before ${still.join(', ')} arrived`,
      );
    }
    if (observer.error !== undefined) {
      return seen(`the demo's consumer stopped: ${observer.error.message}`);
    }
    if (Date.now() > deadline) {
      return seen(
        `not arrived within ${timeoutMs / 1000} s (DEMO_TIMEOUT_SECONDS): ${still.join(', ')}`,
      );
    }
    await delay(50);
  }
}

function payerOrders(orders: readonly DemoOrder[]): DemoOrder[] {
  return orders.filter((order) => order.payer !== undefined);
}

/** The order's payment.created (Payflow's payment id and what it says), once it came. */
function createdPayment(outcomes: readonly Outcome[], orderId: string): CreatedPayment | null {
  for (const outcome of outcomes) {
    const status = outcome.status;
    if (outcome.orderId !== orderId || status?.type !== 'payment.created') continue;
    if (status.paymentId !== null) {
      return { orderId, paymentId: status.paymentId, data: status.data };
    }
  }
  return null;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function describeOutcome(outcome: Outcome): string {
  const what =
    outcome.status === null
      ? `dead letter ${outcome.message.headers['x-dlq-reason'] ?? '?'} (${outcome.message.headers['x-dlq-error'] ?? ''})`
      : outcome.status.type;
  return `${outcome.orderId ?? '(no key)'}: ${what}`;
}

/** Stops everything that was started, worker first. Returns problems worth an exit 1. */
async function shutdown(): Promise<string[]> {
  const problems: string[] = [];
  const lines: string[] = [];
  await resources.observer?.stop().catch(() => undefined);
  const worker = resources.worker;
  if (worker !== undefined) {
    if (worker.running) {
      progress.step('stopping the worker (SIGTERM; it drains)');
      const { exit, ms, killed } = await worker.stop(WORKER_GRACE_MS);
      const how = `${ChildService.describe(exit)} after ${(ms / 1000).toFixed(1)} s`;
      if (killed) {
        problems.push(
          `the worker did not stop within ${WORKER_GRACE_MS / 1000} s of SIGTERM; killed`,
        );
      } else if (exit.signal === 'SIGTERM') {
        // main.ts installs its handler once the worker has started (consumer group joined).
        problems.push('SIGTERM ended the worker at once: it had not finished starting');
      } else if (exit.code !== 0) {
        problems.push(`the worker ended with ${how} after SIGTERM`);
      }
      lines.push(`the worker (SIGTERM: ${how})`);
    } else {
      lines.push(`the worker (had already ended: ${worker.describeExit()})`);
    }
  }
  if (resources.sandbox !== undefined) {
    progress.step('stopping the sandbox');
    await resources.sandbox.stop(SANDBOX_GRACE_MS);
    lines.push('the sandbox');
  }
  if (resources.cluster !== undefined) {
    progress.step(`stopping ${resources.cluster.name}`);
    await resources.cluster.stop();
    lines.push(resources.cluster.name);
  }
  await resources.database?.close();
  progress.clear();
  if (lines.length > 0) process.stdout.write(`Stopped ${lines.join(', ')}.\n`);
  return problems;
}

/** Last lines of a log file, for a failure message. */
function tail(file: string, count: number): string[] {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').filter(Boolean).slice(-count);
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  const stateDir = path.join(os.tmpdir(), 'payflow-bridge-demo');
  mkdirSync(stateDir, { recursive: true });
  const logs = {
    worker: path.join(stateDir, 'worker.log'),
    sandbox: path.join(stateDir, 'sandbox.log'),
  };
  const pidFile = path.join(stateDir, 'pids.json');

  const onSignal = (signal: NodeJS.Signals): void => {
    if (interrupted !== null) {
      // A second Ctrl-C: no more waiting.
      resources.worker?.signal('SIGKILL');
      resources.sandbox?.signal('SIGKILL');
      process.stderr.write('\ndemo: killed the worker and the sandbox\n');
      process.exit(130);
    }
    interrupted = signal;
    progress.clear();
    process.stderr.write(
      `\ndemo: ${signal}: stopping the worker, the sandbox and Kafka (again to kill)\n`,
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // Whatever happens, no child outlives the demo.
  process.on('exit', () => {
    resources.worker?.signal('SIGKILL');
    resources.sandbox?.signal('SIGKILL');
  });

  let failure: string | null = null;
  try {
    await run(stateDir, logs);
  } catch (error) {
    if (error instanceof Interrupted) failure = null;
    else if (error instanceof DemoFailure) failure = error.message;
    else
      failure = `unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
  }
  progress.clear();
  const problems = await shutdown();
  // Only a run that started children wrote the file (a run refused by the lock must not
  // forget the processes of the demo that holds it, or of one that was killed).
  if (resources.sandbox !== undefined) removePidFile(pidFile);
  if (resources.worker !== undefined) {
    process.stdout.write(`Worker log (LOG_LEVEL=warn): ${logs.worker}\n`);
  }
  if (interrupted !== null) {
    process.stderr.write('demo: interrupted; everything it started is stopped\n');
    return SIGNAL_EXIT_CODES[interrupted] ?? 130;
  }
  const all = [...(failure === null ? [] : [failure]), ...problems];
  if (all.length === 0) return 0;
  process.stderr.write(`\ndemo FAILED\n${all.map((problem) => `  ${problem}\n`).join('')}`);
  const lines = tail(logs.worker, 12);
  if (resources.worker !== undefined) {
    process.stderr.write(
      lines.length > 0
        ? `Last lines of the worker's log ${logs.worker}:\n${lines.map((l) => `  ${l}`).join('\n')}\n`
        : `The worker's log ${logs.worker} is empty.\n`,
    );
  }
  return 1;
}

main().then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    process.stderr.write(`demo: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
