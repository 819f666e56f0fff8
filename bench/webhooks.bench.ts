/**
 * Webhook receiver throughput: webhooks/s acknowledged (each stored in the inbox before
 * its 200) and p50/p99 acknowledgement latency at a fixed concurrency, over HTTPS with a
 * self-signed certificate.
 *
 * The receiver runs as a CHILD PROCESS (bench/webhooks/receiver-child.ts: the worker's
 * fastify adapter with the receiver module and a database, without Kafka), so that its
 * CPU is its own; the load generator (undici) and Postgres share the same machine. Many
 * distinct payments (BENCH_PAYMENTS, 4000) are addressed round-robin, so the per-token
 * rate limit (20/s) never throttles; every request carries a new X-Payflow-Delivery.
 * Afterwards every acknowledged webhook is checked to be in the inbox exactly once.
 *
 * `npm run bench:webhooks`; BENCH_REQUESTS (40000), BENCH_CONCURRENCY (64),
 * BENCH_PAYMENTS override. Writes bench/results/webhooks.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { generate } from 'selfsigned';
import { Pool } from 'undici';
import { newWebhookCredentials } from '../src/orders/new-payment/webhook-credentials.js';
import { dedupeKey } from '../src/webhooks/receiver/receive-webhook.command.js';
import { benchDatabaseName, dropDatabase, freshDatabase } from './pipeline/database.js';
import { cpuSeconds, machineCpuSeconds, postgresCpuSeconds } from './pipeline/proc.js';
import { webhooksResultSchema, writeWebhooksChart } from './charts/bench-charts.js';

const KINDS = ['payment-update', 'status-update', 'terminal-failure'] as const;

interface Payment {
  readonly token: string;
  readonly apiKey: string;
}

interface Sent {
  readonly payment: Payment;
  readonly kind: (typeof KINDS)[number];
  readonly deliveryId: string;
}

function env(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

async function startReceiver(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; port: number; stop: () => Promise<void> }> {
  const entry = fileURLToPath(new URL('./webhooks/receiver-child.js', import.meta.url));
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        lines.push(line);
        const match = /"msg":"receiver ready","port":(\d+)/.exec(line);
        if (match?.[1] !== undefined) resolve(Number(match[1]));
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => lines.push(chunk));
    void exited.then(() => reject(new Error(`receiver exited:\n${lines.slice(-20).join('\n')}`)));
  });
  return {
    child,
    port,
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function insertPayments(url: string, count: number): Promise<Payment[]> {
  const payments = Array.from({ length: count }, () => newWebhookCredentials());
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let start = 0; start < count; start += 1000) {
      const chunk = payments.slice(start, start + 1000);
      await client.query(
        `INSERT INTO payments (order_id, state, currency, total_gross_minor, total_net_minor,
                               webhook_token, api_key_hash)
         SELECT 'SO-BENCH-' || t, 'created', 'NOK', 100, 80, t, h
         FROM unnest($1::text[], $2::bytea[]) AS u(t, h)`,
        [chunk.map((p) => p.token), chunk.map((p) => p.apiKeyHash)],
      );
    }
  } finally {
    await client.end();
  }
  return payments.map(({ token, apiKey }) => ({ token, apiKey }));
}

function body(sent: Sent): string {
  return JSON.stringify({
    deliveryId: sent.deliveryId,
    event: 'payment.updated',
    occurredAt: new Date().toISOString(),
    organizationId: 'org-1',
    paymentId: 'pf-bench',
    internalRef: 'SO-BENCH',
    paymentStatus: 'paid',
    installments: [{ id: 'i-1', status: 'paid', amount: 1249.5 }],
    change: { from: 'open', to: 'paid' },
  });
}

interface LoadResult {
  readonly acknowledged: Sent[];
  readonly failures: Record<string, number>;
  readonly latenciesMs: number[];
  readonly durationMs: number;
}

async function load(
  pool: Pool,
  payments: readonly Payment[],
  requests: number,
  concurrency: number,
  offset: number,
): Promise<LoadResult> {
  const acknowledged: Sent[] = [];
  const failures: Record<string, number> = {};
  const latenciesMs: number[] = [];
  let next = 0;
  const started = performance.now();
  const sender = async (): Promise<void> => {
    while (next < requests) {
      const index = next++;
      const payment = payments[(offset + index) % payments.length] as Payment;
      const sent: Sent = {
        payment,
        kind: KINDS[index % KINDS.length] ?? 'payment-update',
        deliveryId: randomUUID(),
      };
      const t0 = performance.now();
      try {
        const response = await pool.request({
          method: 'POST',
          path: `/webhooks/payflow/${payment.token}/${sent.kind}`,
          headers: {
            'content-type': 'application/json',
            'x-api-key': payment.apiKey,
            'x-payflow-delivery': sent.deliveryId,
          },
          body: body(sent),
        });
        const text = await response.body.text();
        latenciesMs.push(performance.now() - t0);
        if (response.statusCode === 200 && text.includes('"accepted"')) acknowledged.push(sent);
        else
          failures[String(response.statusCode)] = (failures[String(response.statusCode)] ?? 0) + 1;
      } catch (error) {
        const name = error instanceof Error ? error.name : 'error';
        failures[name] = (failures[name] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => sender()));
  return { acknowledged, failures, latenciesMs, durationMs: performance.now() - started };
}

async function validate(
  url: string,
  acknowledged: readonly Sent[],
): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ dedupe_key: string; duplicates: number }>(
      `SELECT dedupe_key, duplicates FROM webhook_inbox`,
    );
    const stored = new Map(rows.map((row) => [row.dedupe_key, row.duplicates]));
    let missing = 0;
    let duplicated = 0;
    const seen = new Set<string>();
    for (const sent of acknowledged) {
      const key = dedupeKey(sent.payment.token, sent.kind, sent.deliveryId, Buffer.alloc(0));
      const duplicates = stored.get(key);
      if (duplicates === undefined) missing++;
      else if (duplicates !== 0 || seen.has(key)) duplicated++;
      seen.add(key);
    }
    return {
      acknowledged: acknowledged.length,
      inboxRows: rows.length,
      missing,
      duplicated,
      unexpectedRows: rows.length - seen.size,
    };
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const requests = env('BENCH_REQUESTS', 40_000);
  const concurrency = env('BENCH_CONCURRENCY', 64);
  const paymentCount = env('BENCH_PAYMENTS', 4_000);
  const warmup = Math.min(5_000, Math.ceil(requests / 8));
  const name = benchDatabaseName('webhooks');
  const url = await freshDatabase(name);
  const dir = await mkdtemp(join(tmpdir(), 'pfb-webhooks-bench-'));
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  await writeFile(join(dir, 'cert.pem'), pems.cert);
  await writeFile(join(dir, 'key.pem'), pems.private);
  const receiver = await startReceiver({
    DATABASE_URL: url,
    LOG_LEVEL: 'warn',
    HTTP_PORT: '0',
    HTTP_HOST: '127.0.0.1',
    TLS_CERT_FILE: join(dir, 'cert.pem'),
    TLS_KEY_FILE: join(dir, 'key.pem'),
    PAYFLOW_BASE_URL: 'http://127.0.0.1:9',
    PAYFLOW_PARTNER_BASE_URL: 'http://127.0.0.1:9/partner',
    PAYFLOW_CLIENT_ID: 'bench',
    PAYFLOW_CLIENT_SECRET: 'bench',
    WEBHOOK_PUBLIC_BASE_URL: 'https://127.0.0.1',
  });
  const pool = new Pool(`https://127.0.0.1:${receiver.port}`, {
    connections: concurrency,
    connect: { ca: pems.cert },
  });
  try {
    const payments = await insertPayments(url, paymentCount);
    console.log(
      `receiver pid ${receiver.child.pid ?? 0} on :${receiver.port}; ${paymentCount} payments; warm-up ${warmup}`,
    );
    const warm = await load(pool, payments, warmup, concurrency, 0);
    const cpu0 = {
      receiver: cpuSeconds(receiver.child.pid ?? 0) ?? 0,
      postgres: postgresCpuSeconds(),
      bench: process.cpuUsage(),
      machine: machineCpuSeconds(),
    };
    const run = await load(pool, payments, requests, concurrency, warmup);
    const cpu1 = {
      receiver: cpuSeconds(receiver.child.pid ?? 0) ?? 0,
      postgres: postgresCpuSeconds(),
      bench: process.cpuUsage(cpu0.bench),
      machine: machineCpuSeconds(),
    };
    const sorted = [...run.latenciesMs].sort((a, b) => a - b);
    const check = await validate(url, [...warm.acknowledged, ...run.acknowledged]);
    const ok = check.missing === 0 && check.duplicated === 0 && check.unexpectedRows === 0;
    const n = run.acknowledged.length;
    const seconds = run.durationMs / 1000;
    const result = {
      benchmark: 'webhook receiver: persist-before-ack',
      measuredAt: new Date().toISOString(),
      setup: {
        receiver:
          'child process (bench/webhooks/receiver-child.ts: fastify HTTPS + receiver module, no Kafka)',
        cores: cpus().length,
        concurrency,
        requests,
        warmup,
        distinctPayments: paymentCount,
        tls: 'HTTPS, self-signed EC P-256, keep-alive (undici Pool)',
        node: process.version,
      },
      webhooksPerSecond: round(n / seconds, 0),
      p50Ms: round(percentile(sorted, 50)),
      p90Ms: round(percentile(sorted, 90)),
      p99Ms: round(percentile(sorted, 99)),
      maxMs: round(sorted.at(-1) ?? 0),
      acknowledged: n,
      failures: run.failures,
      cpuMsPerWebhook: {
        receiver: round(((cpu1.receiver - cpu0.receiver) * 1000) / n, 3),
        postgres: round(((cpu1.postgres - cpu0.postgres) * 1000) / n, 3),
        loadGenerator: round((cpu1.bench.user + cpu1.bench.system) / 1000 / n, 3),
      },
      machineBusyPercent: round(
        (100 * (cpu1.machine.busy - cpu0.machine.busy)) / (cpu1.machine.total - cpu0.machine.total),
        1,
      ),
      validation: { ...check, ok },
      target: { webhooksPerSecond: 2000, p99Ms: 50 },
    };
    console.log(JSON.stringify(result, null, 2));
    const out = fileURLToPath(new URL('../../bench/results/webhooks.json', import.meta.url));
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`written to ${out}`);
    const chart = out.replace(/\.json$/, '.svg');
    await writeWebhooksChart(chart, webhooksResultSchema.parse(result));
    console.log(`drawn to ${chart}`);
    if (!ok) process.exitCode = 1;
  } finally {
    await pool.close();
    await receiver.stop();
    await rm(dir, { recursive: true, force: true });
    await dropDatabase(name);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
