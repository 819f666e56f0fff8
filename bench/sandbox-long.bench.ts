/**
 * The Payflow sandbox under a long run (issue 21 §4): 100,000 orders' worth of payments
 * driven straight at its HTTP API with undici (no bridge), while the control API is called
 * in parallel and the sandbox's memory is sampled.
 *
 * Per order: POST /api/payments with callbacks to a local HTTPS sink (every 20th answer of
 * the sink is a 500, so that webhooks are retried); every 10th order has three installments
 * (two debits scheduled in the future); every 4th is paid by the payer (control API
 * simulate: webhooks and a settlement movement), and every 5th paid one partly refunded.
 * Once, halfway, 50,000 settlement rows are seeded, and every 10 s the day's settlement CSV
 * is fetched. Meanwhile a reader calls the control API (stats, the first and a later page of
 * payments and of webhook deliveries, one payment, one payment's deliveries, the clock) one
 * call after another, and RSS (from /proc) and heap (GET /sandbox/stats) are sampled every
 * few seconds.
 *
 * `npm run bench:sandbox-long` prints the figures and writes bench/results/sandbox-long.json.
 * Orders are paced at BENCH_RATE orders/s (400: a bridge at its paced rate, each order
 * being 1.3 requests here; 0 drives as fast as the concurrency allows). BENCH_ORDERS
 * (100000), BENCH_CONCURRENCY (32), BENCH_SAMPLE_MS (3000), BENCH_SANDBOX_HEAP_MB (the
 * sandbox's --max-old-space-size; default Node's) and any SANDBOX_* variable (passed to
 * the sandbox) override.
 */
import { createServer } from 'node:https';
import { readFile, mkdir, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir, loadavg, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { selfSignedTls } from '../testbed/tls.js';
import { nearestRank } from './percentile.js';
import { benchPaymentRequest, startSandboxChild, type BenchInstallment } from './sandbox.bench.js';

const ORDERS = Number(process.env.BENCH_ORDERS ?? 100_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const SAMPLE_MS = Number(process.env.BENCH_SAMPLE_MS ?? 3_000);
/** Orders started per second (0: as fast as the concurrency allows). */
const RATE = Number(process.env.BENCH_RATE ?? 400);
const PAGE = 100;

interface Sample {
  atMs: number;
  orders: number;
  rssMb: number;
  heapMb: number | null;
  payments: number | null;
  deliveries: number | null;
  jobs: number | null;
}

/** Every 10th order has a plan: one instalment due, two in 2031 (debits scheduled). */
const PLAN: readonly BenchInstallment[] = [
  { date: '2026-01-01', grossAmount: 416.5 },
  { date: '2031-01-01', grossAmount: 416.5 },
  { date: '2031-02-01', grossAmount: 416.5 },
];

function paymentBody(n: number, hookUrl: string, installments: boolean): string {
  const callback = {
    url: `${hookUrl}/update/${n}`,
    status_update_url: `${hookUrl}/status/${n}`,
    api_key: 'k',
  };
  return JSON.stringify(benchPaymentRequest(`LR-${n}`, callback, installments ? PLAN : undefined));
}

const round = (value: number, decimals = 1): number => Number(value.toFixed(decimals));

async function rssMbOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/** Least-squares slope of y over x. */
function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

async function main(): Promise<void> {
  const tls = await selfSignedTls();
  const dir = await mkdtemp(join(tmpdir(), 'sandbox-long-'));
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, tls.ca);
  let hooks = 0;
  const sink = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    request.resume();
    request.on('end', () => {
      hooks++;
      response.statusCode = hooks % 20 === 0 ? 500 : 200;
      response.end();
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkAddress = sink.address();
  const hookUrl = `https://127.0.0.1:${typeof sinkAddress === 'object' && sinkAddress ? sinkAddress.port : 0}/hook`;

  const passOn = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[0].startsWith('SANDBOX_') && entry[1] !== undefined,
    ),
  );
  // BENCH_SANDBOX_HEAP_MB: the sandbox's old-generation cap; unset, Node's default (which
  // lets garbage pile up to several hundred MB before a full collection).
  const heapCap = process.env.BENCH_SANDBOX_HEAP_MB;
  const sandbox = await startSandboxChild({
    env: {
      SANDBOX_WEBHOOK_CA_FILE: caFile,
      ...passOn,
      ...(heapCap ? { NODE_OPTIONS: `--max-old-space-size=${heapCap}` } : {}),
    },
  });
  const api = new Pool(sandbox.url, { connections: CONCURRENCY });
  const controlPool = new Pool(sandbox.url, { connections: 2 });
  const started = performance.now();
  const samples: Sample[] = [];
  const control: { kind: string; ms: number }[] = [];
  const csv: number[] = [];
  let created = 0;
  let errors = 0;
  let running = true;
  const paymentIds: string[] = [];

  const json = async <T>(
    pool: Pool,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    token?: string,
  ) => {
    const response = await pool.request({
      path,
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.body.text();
    return { status: response.statusCode, body: (text ? JSON.parse(text) : {}) as T };
  };

  const tokenAnswer = await fetch(`${sandbox.partnerUrl}/auth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from('sandbox-client:sandbox-secret').toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const token = ((await tokenAnswer.json()) as { access_token: string }).access_token;

  const stats = async () =>
    (
      await json<{
        payments?: number;
        webhookDeliveries?: number;
        scheduledJobs?: number;
        heapUsedBytes?: number;
      }>(controlPool, 'GET', '/sandbox/stats')
    ).body;

  const sampler = (async () => {
    while (running) {
      const s = await stats();
      samples.push({
        atMs: performance.now() - started,
        orders: created,
        rssMb: round(await rssMbOf(sandbox.pid)),
        heapMb: s.heapUsedBytes === undefined ? null : round(s.heapUsedBytes / 2 ** 20),
        payments: s.payments ?? null,
        deliveries: s.webhookDeliveries ?? null,
        jobs: s.scheduledJobs ?? null,
      });
      await sleep(SAMPLE_MS);
    }
  })();

  const reader = (async () => {
    let round = 0;
    let paymentsCursor: string | null = null;
    let deliveriesCursor: string | null = null;
    while (running) {
      round++;
      const someId = paymentIds[Math.floor(Math.random() * paymentIds.length)] ?? 'none';
      const calls: [string, string][] = [
        ['stats', '/sandbox/stats'],
        ['payments first page', `/sandbox/payments?limit=${PAGE}`],
        [
          'payments next page',
          `/sandbox/payments?limit=${PAGE}${paymentsCursor ? `&cursor=${paymentsCursor}` : ''}`,
        ],
        ['payment', `/sandbox/payments/${someId}`],
        ['deliveries first page', `/sandbox/webhook-deliveries?limit=${PAGE}`],
        [
          'deliveries next page',
          `/sandbox/webhook-deliveries?limit=${PAGE}${deliveriesCursor ? `&cursor=${deliveriesCursor}` : ''}`,
        ],
        ['deliveries of a payment', `/sandbox/webhook-deliveries?paymentId=${someId}`],
        ['clock', '/sandbox/clock'],
      ];
      const [kind, path] = calls[round % calls.length] ?? ['clock', '/sandbox/clock'];
      const at = performance.now();
      const answer = await json<{ nextCursor?: string | null }>(controlPool, 'GET', path);
      control.push({ kind, ms: performance.now() - at });
      if (kind === 'payments next page') paymentsCursor = answer.body.nextCursor ?? null;
      if (kind === 'deliveries next page') deliveriesCursor = answer.body.nextCursor ?? null;
      await sleep(20);
    }
  })();

  const today = new Date().toISOString().slice(0, 10);
  const settlements = (async () => {
    let seeded = false;
    while (running) {
      await sleep(10_000);
      if (!running) break;
      if (!seeded && created >= ORDERS / 2) {
        seeded = true;
        const at = performance.now();
        await json(controlPool, 'POST', '/sandbox/settlements', { date: today, count: 50_000 });
        control.push({ kind: 'seed 50,000 settlement rows', ms: performance.now() - at });
      }
      const at = performance.now();
      const response = await api.request({
        path: `/partner/settlements/generate_csv?from=${today}&to=${today}`,
        method: 'GET',
        headers: { authorization: `Bearer ${token}` },
      });
      await response.body.dump();
      csv.push(performance.now() - at);
    }
  })();

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ORDERS) {
      const n = next++;
      if (RATE > 0) {
        const due = (n / RATE) * 1000 - (performance.now() - started);
        if (due > 0) await sleep(due);
      }
      const answer = await json<{ id?: string }>(
        api,
        'POST',
        '/api/payments',
        paymentBody(n, hookUrl, n % 10 === 0),
        token,
      );
      const id = answer.body.id;
      if (answer.status !== 200 || id === undefined) {
        errors++;
        continue;
      }
      if (n % 100 === 0) paymentIds.push(id);
      if (paymentIds.length > 1000) paymentIds.splice(0, 500);
      if (n % 4 === 0) {
        const paid = await json(api, 'POST', `/sandbox/payments/${id}/simulate`, {
          action: 'paid',
        });
        if (paid.status !== 200) errors++;
        if (n % 20 === 0) {
          const refund = await json(
            api,
            'POST',
            '/api/refund',
            {
              crossPayment: id,
              currency: 'NOK',
              totalGrossAmount: 100,
              totalNetAmount: 80,
              invoiceLines: [
                {
                  description: 'Goodwill',
                  grossUnitPrice: 100,
                  netUnitPrice: 80,
                  quantity: 1,
                  vatAmount: 20,
                  taxRate: 25,
                },
              ],
            },
            token,
          );
          if (refund.status !== 200) errors++;
        }
      }
      created++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const loadMs = performance.now() - started;
  // A last sample, after the webhooks' first attempts settled a little.
  await sleep(SAMPLE_MS);
  running = false;
  await Promise.all([sampler, reader, settlements]);
  const final = await stats();
  samples.push({
    atMs: performance.now() - started,
    orders: created,
    rssMb: round(await rssMbOf(sandbox.pid)),
    heapMb: final.heapUsedBytes === undefined ? null : round(final.heapUsedBytes / 2 ** 20),
    payments: final.payments ?? null,
    deliveries: final.webhookDeliveries ?? null,
    jobs: final.scheduledJobs ?? null,
  });
  await Promise.allSettled([api.close(), controlPool.close(), sandbox.stop()]);
  sink.close();

  const first = samples.find((s) => s.orders >= Math.min(5_000, ORDERS / 10)) ?? samples[0];
  const middle = samples.find((s) => s.orders >= ORDERS / 2) ?? samples[samples.length - 1];
  const last = samples[samples.length - 1];
  const secondHalf = samples.filter((s) => s.orders >= ORDERS / 2);
  const perTenThousand = (points: Sample[], pick: (s: Sample) => number | null) =>
    round(
      slope(
        points.flatMap((s) => {
          const y = pick(s);
          return y === null ? [] : [{ x: s.orders / 10_000, y }];
        }),
      ),
      2,
    );
  const reads = control
    .filter((c) => !c.kind.startsWith('seed'))
    .map((c) => c.ms)
    .sort((a, b) => a - b);
  const byKind = Object.fromEntries(
    [...new Set(control.map((c) => c.kind))].map((kind) => {
      const sorted = control
        .filter((c) => c.kind === kind)
        .map((c) => c.ms)
        .sort((a, b) => a - b);
      return [
        kind,
        {
          calls: sorted.length,
          p50Ms: round(nearestRank(sorted, 0.5), 2),
          p99Ms: round(nearestRank(sorted, 0.99), 2),
          maxMs: round(sorted[sorted.length - 1] ?? 0, 2),
        },
      ];
    }),
  );
  const csvSorted = [...csv].sort((a, b) => a - b);
  const result = {
    name: 'sandbox: a long run (issue 21 §4)',
    date: new Date().toISOString(),
    node: process.version,
    machine: { cpus: cpus().length, loadAverage: loadavg().map((l) => round(l, 2)) },
    orders: created,
    errors,
    concurrency: CONCURRENCY,
    paceOrdersPerSecond: RATE,
    sandboxHeapCapMb: heapCap === undefined ? null : Number(heapCap),
    loadSeconds: round(loadMs / 1000),
    ordersPerSecond: round((created / loadMs) * 1000, 0),
    webhooksReceived: hooks,
    rssMb: {
      start: first?.rssMb,
      middle: middle?.rssMb,
      end: last?.rssMb,
      peak: Math.max(...samples.map((s) => s.rssMb)),
    },
    heapMb: { start: first?.heapMb, middle: middle?.heapMb, end: last?.heapMb },
    slopeMbPer10kOrders: {
      rssWholeRun: perTenThousand(
        samples.filter((s) => s.orders >= (first?.orders ?? 0)),
        (s) => s.rssMb,
      ),
      rssSecondHalf: perTenThousand(secondHalf, (s) => s.rssMb),
      heapSecondHalf: perTenThousand(secondHalf, (s) => s.heapMb),
    },
    kept: {
      payments: last?.payments,
      webhookDeliveries: last?.deliveries,
      scheduledJobs: last?.jobs,
    },
    control: {
      calls: reads.length,
      p50Ms: round(nearestRank(reads, 0.5), 2),
      p99Ms: round(nearestRank(reads, 0.99), 2),
      maxMs: round(reads[reads.length - 1] ?? 0, 2),
      byKind,
    },
    settlementCsv: {
      calls: csv.length,
      p50Ms: round(nearestRank(csvSorted, 0.5), 1),
      maxMs: round(csvSorted[csvSorted.length - 1] ?? 0, 1),
    },
    samples,
  };
  const { samples: _samples, ...figures } = result;
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  const file = fileURLToPath(new URL('../../bench/results/sandbox-long.json', import.meta.url));
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`wrote ${file}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
