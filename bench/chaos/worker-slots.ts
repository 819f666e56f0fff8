/**
 * The campaign's two worker slots: each has a fixed port and runs one worker process
 * (the real dist/src/main.js) at a time; a killed worker is started again in its slot. A
 * watcher notes, for every process, whether it was seen consuming (events finished or in
 * flight) and answering /health/live, so that a worker alive but deaf can be told apart.
 */
import { join } from 'node:path';
import { WorkerProcess } from '../../testbed/worker-process.js';

/** One worker slot: its fixed port and every process that ran in it. */
export interface Slot {
  readonly name: string;
  readonly port: number;
  current: WorkerProcess | undefined;
  readonly lives: Life[];
}

/** One process of a slot, and whether it was seen consuming. */
export interface Life {
  readonly pid: number;
  readonly startedAt: number;
  endedAt: number | undefined;
  consumed: boolean;
  liveOk: boolean;
}

export interface WorkerSetting {
  readonly databaseUrl: string;
  readonly bootstrapServers: string;
  readonly topics: {
    readonly orders: string;
    readonly status: string;
    readonly settlements: string;
  };
  readonly payflowUrl: string;
  readonly webhookPort: number;
  readonly runDir: string;
  readonly ca: string;
  /** PAYFLOW_REQUEST_TIMEOUT and PAYFLOW_LATE_EFFECT_WINDOW (settings.ts). */
  readonly requestTimeout: string;
  readonly lateEffectWindow: string;
}

export function workerEnv(setting: WorkerSetting, slot: Slot): Record<string, string> {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'info',
    DATABASE_URL: setting.databaseUrl,
    DB_POOL_SIZE: '10',
    KAFKA_BROKERS: setting.bootstrapServers,
    KAFKA_GROUP_ID: 'payflow-bridge-chaos',
    KAFKA_SESSION_TIMEOUT: '6s',
    KAFKA_FETCH_MAX_WAIT: '500ms',
    TOPIC_ORDERS: setting.topics.orders,
    TOPIC_PAYMENT_STATUS: setting.topics.status,
    TOPIC_SETTLEMENTS: setting.topics.settlements,
    MAX_IN_FLIGHT: '128',
    RETRY_MAX_ATTEMPTS: '30',
    RETRY_MAX_DURATION: '10m',
    PAYFLOW_BASE_URL: setting.payflowUrl,
    PAYFLOW_PARTNER_BASE_URL: `${setting.payflowUrl}/partner`,
    PAYFLOW_CLIENT_ID: 'sandbox-client',
    PAYFLOW_CLIENT_SECRET: 'sandbox-secret',
    PAYFLOW_MAX_CONNECTIONS: '128',
    // Short, so that the late-effect phase's 8 s latency outlasts it: the worker gives up
    // on the call while Payflow still applies it (bench/chaos/payflow-faults.ts).
    PAYFLOW_REQUEST_TIMEOUT: setting.requestTimeout,
    PAYFLOW_LATE_EFFECT_WINDOW: setting.lateEffectWindow,
    WEBHOOK_PUBLIC_BASE_URL: `https://localhost:${setting.webhookPort}`,
    WEBHOOK_PROCESSING_POLL_INTERVAL: '250ms',
    TLS_CERT_FILE: join(setting.runDir, 'cert.pem'),
    TLS_KEY_FILE: join(setting.runDir, 'key.pem'),
    HTTP_PORT: String(slot.port),
    HTTP_HOST: '127.0.0.1',
    // Behind the balancer every webhook connection comes from one address (as behind a real
    // load balancer): the per-address limit must leave room for all of them.
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1024',
    MANAGEMENT_PORT: '0',
    MANAGEMENT_HOST: '127.0.0.1',
    RECONCILE_ENABLED: 'false',
    SETTLEMENT_ENABLED: 'false',
  };
}

export async function startSlot(setting: WorkerSetting, slot: Slot): Promise<void> {
  const worker = await WorkerProcess.start({
    env: workerEnv(setting, slot),
    logFile: join(setting.runDir, `${slot.name}.log`),
    startTimeoutMs: 120_000,
    ca: setting.ca,
  });
  slot.current = worker;
  slot.lives.push({
    pid: worker.pid,
    startedAt: performance.now(),
    endedAt: undefined,
    consumed: false,
    liveOk: false,
  });
}

/** Watches every live worker until stopped: did it consume since it started, does /health/live answer? */
export function watchSlots(slots: readonly Slot[]): { stop(): Promise<void> } {
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      for (const slot of slots) {
        const worker = slot.current;
        const life = slot.lives.at(-1);
        if (worker === undefined || life === undefined || !worker.alive) continue;
        // Consuming: it finished events, or holds some it took from Kafka. A worker whose
        // short life between two rebalances held only events that wait (another worker's
        // lease, a call held for a late effect) took events all the same: it is not deaf.
        const processed = await worker.metric('payflow_bridge_order_events_processed_total');
        const held = await worker.metric('payflow_bridge_order_events_in_flight');
        if ((processed ?? 0) > 0 || (held ?? 0) > 0) life.consumed = true;
        if ((await worker.get('/health/live')).status === 200) life.liveOk = true;
      }
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  })();
  return {
    stop: async () => {
      watching = false;
      await watcher;
    },
  };
}
