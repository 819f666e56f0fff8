/**
 * `npm run chaos`: the fault campaign. On a fresh 3-node Kafka cluster (KRaft, replication
 * factor 3, min.insync.replicas 2), a fresh database and the Payflow sandbox as a child
 * process, two workers (the real dist/src/main.js, child processes) take 10,000 order lives
 * of every event type while Payflow's webhooks flow back over HTTPS, and meanwhile:
 *
 * - 10 worker SIGKILLs at random moments (each worker is started again at once);
 * - one broker SIGKILL, restarted about 15 s later;
 * - one Postgres restart (of a private server, testbed/postgres-instance.ts);
 * - the sandbox answering 30 % 5xx, then 429 with Retry-After, then with 2 s of latency,
 *   then late effects on installments and documents for 20 s (8 s of latency past the
 *   workers' 3 s time-out; 504 answered at once and applied 4 s later):
 *   bench/chaos/payflow-faults.ts.
 *
 * Then it checks the parties' own records (testbed/invariants.ts: the sandbox's payments,
 * Postgres's tables, the status and dead-letter topics; bench/chaos/effects-verdict.ts: per
 * payment, the installments and documents Payflow holds against what the bridge told and
 * recorded), prints a table (with the in-doubt dead letters by event type and the late
 * effects) and writes bench/results/chaos.json (chaos-loaded.json when loaded). Exit 0 only
 * with no duplicate payment, no effect doubled at Payflow, no lost event, no status event
 * missing, out of order or told twice, no worker alive but deaf, and no creation in doubt
 * whose request never left its worker.
 *
 * Seeded: the seed is printed; CHAOS_SEED=<n> replays the same plan (the same orders, the
 * same fault moments; the machine's timing still differs). The other knobs
 * (CHAOS_ORDERS, CHAOS_RATE, CHAOS_BUSY_LOOPS for a loaded machine, the workers' time-out
 * and late-effect window, CHAOS_KEEP_DB) are in bench/chaos/settings.ts.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KraftCluster, freePorts } from '../testbed/kafka/kraft-cluster.js';
import {
  checkInvariants,
  eventsOnTopic,
  formatReport,
  waitSettled,
} from '../testbed/invariants.js';
import { createTopics, PacedProducer } from '../testbed/kafka-io.js';
import { interleave, planOrders, prng, type OrderPlan } from '../testbed/order-load.js';
import { selfSignedTls } from '../testbed/tls.js';
import { PostgresInstance } from '../testbed/postgres-instance.js';
import { startSandboxChild } from './sandbox.bench.js';
import { BusyLoops } from './chaos/busy-loops.js';
import { checkEffects } from './chaos/effects-verdict.js';
import { lateEffectMetrics, readHeldAttempts } from './chaos/late-effect-figures.js';
import { SandboxControl, planPhases, runPhases } from './chaos/payflow-faults.js';
import { PayflowRecorder, WebhookBalancer } from './chaos/proxies.js';
import { lateEffectRows, summarize, type LateEffectFigures } from './chaos/result.js';
import { chaosSettings, durationMs } from './chaos/settings.js';
import { StatusFollower } from './chaos/status-follower.js';
import { startSlot, watchSlots, type Slot, type WorkerSetting } from './chaos/worker-slots.js';

const TOPICS = {
  orders: 'erp.orders.v1',
  dlq: 'erp.orders.v1.dlq',
  status: 'payflow.payment-status.v1',
  settlements: 'payflow.settlements.v1',
} as const;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const started = performance.now();
const elapsed = (): string => `${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s`;
const log = (line: string): void => {
  process.stdout.write(`[${elapsed()}] ${line}\n`);
};

interface FaultRecord {
  readonly at: string;
  readonly what: string;
}

async function main(): Promise<void> {
  const settings = chaosSettings(process.env);
  const { seed, orders, rate } = settings;
  log(
    `fault campaign: seed ${seed} (replay with CHAOS_SEED=${seed}), ${orders} orders at ${rate} events/s` +
      (settings.busyLoops > 0 ? `, loaded: ${settings.busyLoops} busy loop(s)` : ''),
  );
  // Started first and kept to the end: the whole run shares the machine with them.
  const busyLoops = BusyLoops.start(settings.busyLoops);
  const random = prng(seed);
  const runDir = await mkdtemp(join(tmpdir(), 'pfb-chaos-'));
  const faults: FaultRecord[] = [];
  const fault = (what: string): void => {
    faults.push({ at: elapsed().trim(), what });
    log(`FAULT ${what}`);
  };

  // ---- the parties
  const cluster = await KraftCluster.start({ nodes: 3, parentDir: runDir });
  log(`3-node Kafka cluster ready in ${(cluster.figures.readyMs / 1000).toFixed(1)} s`);
  // A Postgres of the campaign's own: its restart (a fault) leaves the machine's alone.
  const postgres = await PostgresInstance.start();
  const databaseUrl = await postgres.createDatabase('payflow_bridge_chaos');
  log(`private Postgres on port ${postgres.port}`);
  const tls = await selfSignedTls();
  await writeFile(join(runDir, 'cert.pem'), tls.cert);
  await writeFile(join(runDir, 'key.pem'), tls.key);
  const sandbox = await startSandboxChild({
    env: { SANDBOX_WEBHOOK_CA_FILE: join(runDir, 'cert.pem') },
  });
  const recorder = await PayflowRecorder.start(sandbox.url);
  const ports = await freePorts(2);
  const slots: Slot[] = ports.map((port, index) => ({
    name: `worker-${index + 1}`,
    port,
    current: undefined,
    lives: [],
  }));
  const balancer = await WebhookBalancer.start(() =>
    slots.flatMap((slot) => (slot.current?.alive === true ? [slot.port] : [])),
  );
  await createTopics(
    cluster.brokers,
    [
      { topic: TOPICS.orders, partitions: 12 },
      { topic: TOPICS.dlq, partitions: 12 },
      { topic: TOPICS.status, partitions: 12 },
      { topic: TOPICS.settlements, partitions: 6 },
    ],
    3,
  );

  const workerSetting: WorkerSetting = {
    databaseUrl,
    bootstrapServers: cluster.bootstrapServers,
    topics: TOPICS,
    payflowUrl: recorder.url,
    webhookPort: balancer.port,
    runDir,
    ca: tls.ca,
    requestTimeout: settings.requestTimeout,
    lateEffectWindow: settings.lateEffectWindow,
  };
  await Promise.all(slots.map((slot) => startSlot(workerSetting, slot)));
  log(`workers ${slots.map((slot) => slot.current?.pid).join(', ')} consuming`);

  const watcher = watchSlots(slots);

  // ---- the load and the webhooks flowing back
  const plans = planOrders({ prefix: `CH-${seed}`, orders, seed });
  const events = interleave(plans, seed + 1);
  const lifeOf = new Map<string, OrderPlan['life']>(plans.map((plan) => [plan.orderId, plan.life]));
  const follower = await StatusFollower.start(
    cluster.brokers,
    TOPICS.status,
    sandbox.url,
    (orderId) => {
      // Orders that only get a payment: the payer opens the link or pays.
      if (lifeOf.get(orderId) !== 'created') return undefined;
      const draw = random();
      return draw < 0.5 ? 'paid' : draw < 0.8 ? 'opened' : undefined;
    },
  );
  const producer = await PacedProducer.start(cluster.brokers, TOPICS.orders);
  const loadSeconds = events.length / rate;
  log(`${events.length} events of ${orders} orders over ~${loadSeconds.toFixed(0)} s`);
  const sending = producer.sendPaced(events, rate);

  // ---- the fault plan (seeded moments within the load)
  const window = Math.max(60, loadSeconds - 20) * 1000;
  const at = (fraction: number): number => Math.round(10_000 + fraction * (window - 10_000));
  const killMoments = Array.from({ length: 10 }, () => at(random())).sort((a, b) => a - b);
  const brokerAt = at(0.3 + random() * 0.2);
  const brokerVictim = 1 + Math.floor(random() * 3);
  const postgresAt = at(0.55 + random() * 0.2);
  const phases = planPhases(at, settings.latePhaseMs);
  const control = new SandboxControl(sandbox.url);
  const loadStart = performance.now();
  const waitUntil = async (ms: number): Promise<void> => {
    const left = loadStart + ms - performance.now();
    if (left > 0) await sleep(left);
  };

  const workerKills = (async () => {
    for (const [index, moment] of killMoments.entries()) {
      await waitUntil(moment);
      // A worker gets at least 5 s after its start before the next kill.
      const newest = Math.max(...slots.map((slot) => slot.lives.at(-1)?.startedAt ?? 0));
      if (performance.now() - newest < 5_000) await sleep(5_000 - (performance.now() - newest));
      const alive = slots.filter((slot) => slot.current?.alive === true);
      const slot = alive[Math.floor(random() * alive.length)];
      if (slot?.current === undefined) continue;
      const victim = slot.current;
      const inFlight = await victim.metric('payflow_bridge_order_events_in_flight');
      await victim.kill();
      const life = slot.lives.at(-1);
      if (life !== undefined) life.endedAt = performance.now();
      fault(
        `worker kill ${index + 1}/10: SIGKILL ${slot.name} (pid ${victim.pid}, ${inFlight ?? '?'} in flight)`,
      );
      // A start can fail while a broker or Postgres is down (it exits 1): try again.
      for (let attempt = 1; attempt <= 5; attempt++) {
        try {
          await startSlot(workerSetting, slot);
          break;
        } catch (error) {
          log(`could not start ${slot.name} (attempt ${attempt}): ${String(error).split('\n')[0]}`);
          await sleep(3_000);
        }
      }
      log(`${slot.name} started again (pid ${slot.current?.pid})`);
    }
  })();
  const brokerKill = (async () => {
    await waitUntil(brokerAt);
    await cluster.kill(brokerVictim);
    fault(`broker ${brokerVictim} SIGKILL`);
    await sleep(15_000);
    await cluster.restart(brokerVictim);
    fault(`broker ${brokerVictim} restarted`);
  })();
  const postgresRestart = (async () => {
    await waitUntil(postgresAt);
    fault('Postgres restart (pg_ctl restart -m fast)');
    await postgres.restart();
    log('Postgres is back');
  })();
  const sandboxFaults = runPhases(
    control,
    phases,
    { waitUntil, elapsedMs: () => performance.now() - loadStart },
    // A slow set-up means a busy sandbox or machine: the phase began that much later.
    (name, setUpMs) =>
      fault(
        `sandbox: ${name}${setUpMs > 1_000 ? ` (set up in ${(setUpMs / 1000).toFixed(1)} s)` : ''}`,
      ),
  );
  const [, , , , latePhase] = await Promise.all([
    sending,
    workerKills,
    brokerKill,
    postgresRestart,
    sandboxFaults,
  ]);
  const loadEndedAt = performance.now();
  log(
    `all ${producer.sent} sends done (${producer.failedSends} failed and resent); waiting for the pipeline to settle`,
  );

  // ---- settle (what reached the topic: kafkajs may lose an acknowledged record, see report)
  const onTopic = await eventsOnTopic(cluster.brokers, TOPICS.orders, events);
  const open = await waitSettled(
    databaseUrl,
    onTopic.map((event) => event.eventId),
    300_000,
    (() => {
      let last = 0;
      return (openNow: number, pending: number) => {
        if (performance.now() - last > 10_000) {
          last = performance.now();
          log(`  ${openNow} events open, ${pending} outbox rows pending`);
        }
      };
    })(),
  );
  log(`settled: ${open} open`);
  // Creations in doubt that exist at Payflow end when Payflow says so: a webhook names them.
  const inDoubt = await follower.simulateInDoubt(databaseUrl);
  log(`in-doubt creations found at Payflow and opened there: ${inDoubt}`);
  // Webhook deliveries that failed during a worker kill are retried on Payflow's schedule.
  // A delivery that failed again (its worker killed, or Postgres restarting) waits for its
  // next step of Payflow's back-off table (5 min, five times): the clock moves on until
  // every webhook arrived or four steps passed.
  await sleep(3_000);
  for (let step = 0; step < 4 && (step === 0 || follower.summary().missing > 0); step++) {
    await control.call('POST', '/clock/advance', { minutes: 6 });
    await follower.waitWebhooks(step === 0 ? 60_000 : 20_000);
  }
  await waitSettled(databaseUrl, [], 60_000);

  // ---- not deaf: after every fault, each live worker still takes events. A probe of 48
  // new orders spreads over every partition; each live worker must process some of them.
  const probePlans = planOrders({ prefix: `PROBE-${seed}`, orders: 48, seed: seed + 2 }).map(
    (plan) => ({ ...plan, events: plan.events.slice(0, 1) }),
  );
  const probe = probePlans.flatMap((plan) => plan.events);
  const before = await Promise.all(
    slots.map((slot) =>
      slot.current === undefined
        ? Promise.resolve(undefined)
        : slot.current.metric('payflow_bridge_order_events_processed_total'),
    ),
  );
  await producer.sendPaced(probe, 1_000);
  const probeOpen = await waitSettled(
    databaseUrl,
    (await eventsOnTopic(cluster.brokers, TOPICS.orders, probe)).map((event) => event.eventId),
    60_000,
  );
  const after = await Promise.all(
    slots.map((slot) =>
      slot.current === undefined
        ? Promise.resolve(undefined)
        : slot.current.metric('payflow_bridge_order_events_processed_total'),
    ),
  );
  const probeTaken = slots.map((slot, index) => ({
    slot: slot.name,
    pid: slot.current?.pid ?? 0,
    processed: (after[index] ?? 0) - (before[index] ?? 0),
  }));
  log(`probe: ${probeOpen} open; processed per worker ${JSON.stringify(probeTaken)}`);
  events.push(...probe);
  await watcher.stop();
  // Late applications answered during the late phase have landed long since; make sure.
  const sandboxLate = await control.waitLateApplications(130_000);
  // The workers' own late-effect metrics, if they expose any (only the live processes).
  const metricsTexts = await Promise.all(
    slots.map(async (slot) => {
      const answer = await slot.current?.get('/metrics');
      return answer?.status === 200 && typeof answer.body === 'string' ? answer.body : '';
    }),
  );

  // ---- stop and check
  await producer.stop();
  await follower.stop();
  const exits = await Promise.all(
    slots.map((slot) => slot.current?.stop() ?? Promise.resolve(null)),
  );
  for (const slot of slots) {
    const life = slot.lives.at(-1);
    if (life !== undefined) life.endedAt = performance.now();
  }
  const report = await checkInvariants({
    databaseUrl,
    sandboxUrl: sandbox.url,
    brokers: cluster.brokers,
    topics: TOPICS,
    events,
    sentPaymentTokens: recorder.paymentTokens,
  });
  const effects = await checkEffects({
    databaseUrl,
    sandboxUrl: sandbox.url,
    brokers: cluster.brokers,
    statusTopic: TOPICS.status,
    events,
  });
  const lateEffects: LateEffectFigures = {
    phase: latePhase,
    sandbox: sandboxLate,
    heldAttempts: await readHeldAttempts(databaseUrl),
    workerMetrics: lateEffectMetrics(metricsTexts),
  };
  const lives = slots.flatMap((slot) => slot.lives.map((life) => ({ slot: slot.name, ...life })));
  // Deaf: alive for 20 s or more while the load ran and never seen consuming or answering
  // /health/live; or alive at the end and taking none of the probe.
  const deaf = [
    ...lives.filter(
      (life) =>
        Math.min(life.endedAt ?? loadEndedAt, loadEndedAt) - life.startedAt >= 20_000 &&
        !(life.consumed && life.liveOk),
    ),
    ...probeTaken.filter((taken) => taken.processed <= 0),
  ];
  const webhooks = follower.summary();
  const problems = [...report.problems, ...effects.problems];
  if (open > 0) problems.push(`${open} event(s) or outbox row(s) still open after 5 minutes`);
  if (deaf.length > 0) problems.push(`${deaf.length} worker process(es) alive but deaf`);
  if (webhooks.missing > 0) {
    problems.push(`${webhooks.missing} simulated payment(s) without their payment.status_changed`);
  }
  const passed = problems.length === 0;
  const seconds = Math.round((performance.now() - started) / 1000);

  process.stdout.write(`\n${formatReport(report)}\n`);
  for (const [label, value] of lateEffectRows(effects, lateEffects)) {
    process.stdout.write(`${label.padEnd(44)}  ${value}\n`);
  }
  const windowMs = durationMs(settings.lateEffectWindow);
  const lags = recorder.answeredAfterGiveUpMs;
  const late = {
    count: lags.length,
    maxMs: lags.reduce((max, lag) => Math.max(max, lag), 0),
    pastWindow: lags.filter((lag) => lag > windowMs).length,
  };
  const extra: [string, string][] = [
    ['worker processes (restarts)', `${lives.length} (${lives.length - slots.length})`],
    ['worker processes alive but deaf', String(deaf.length)],
    ['final worker exit codes', exits.map(String).join(', ')],
    ['webhooks simulated / status events seen', `${webhooks.simulated} / ${webhooks.seen}`],
    ['Payflow requests through the recorder', String(recorder.requests)],
    [
      '  answered after their worker gave up (max)',
      `${late.count} (${late.maxMs} ms), ${late.pastWindow} past the ${settings.lateEffectWindow} window`,
    ],
    ['wall time', `${seconds} s`],
  ];
  for (const [label, value] of extra) process.stdout.write(`${label.padEnd(44)}  ${value}\n`);
  process.stdout.write(`\n${passed ? 'PASSED' : `FAILED: ${problems.join('; ')}`}\n`);

  const result = {
    name: 'fault campaign (npm run chaos)',
    date: new Date().toISOString(),
    seed,
    orders,
    rate,
    loaded: { busyLoops: settings.busyLoops },
    workerTimeouts: {
      requestTimeout: settings.requestTimeout,
      lateEffectWindow: settings.lateEffectWindow,
    },
    passed,
    problems,
    wallSeconds: seconds,
    faults,
    report: summarize(report),
    effects,
    lateEffects,
    workers: { processes: lives.length, deaf: deaf.length, exits, lives },
    webhooks,
    probe: probeTaken,
    payflowRequests: recorder.requests,
    answeredAfterGiveUp: late,
    producer: {
      sent: producer.sent,
      failedSends: producer.failedSends,
      lastError: producer.lastError ?? null,
    },
  };
  // A loaded run keeps its own file: the quiet run's figures stay the reference.
  const name = settings.busyLoops > 0 ? 'chaos-loaded.json' : 'chaos.json';
  const file = fileURLToPath(new URL(`../../bench/results/${name}`, import.meta.url));
  await mkdir(join(file, '..'), { recursive: true });
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${file}; worker logs in ${runDir}`);

  await Promise.allSettled([recorder.close(), balancer.close(), sandbox.stop(), busyLoops.stop()]);
  await cluster.stop();
  if (!settings.keepDatabase) await postgres.stop();
  else log(`Postgres kept running on port ${postgres.port}`);
  process.exit(passed ? 0 : 1);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `chaos failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
