/**
 * Throughput of the Payflow sandbox's POST /api/payments: undici at a fixed concurrency,
 * after a warm-up, reporting requests/s and p50/p99 latency, and the server's CPU per
 * request (from GET /sandbox/stats).
 *
 * `npm run bench:sandbox` measures the sandbox as a child process (the baseline: client
 * and server do not share one core) and in-process, and writes bench/results/sandbox.json.
 * `measureCreatePaymentRate` is exported so that a pipeline benchmark can measure the bare
 * API figure in the same run. BENCH_REQUESTS (20000) and BENCH_CONCURRENCY (64) override.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { startSandbox } from '../src/sandbox/sandbox.server.js';
import { nearestRank } from './percentile.js';

export interface CreatePaymentRateOptions {
  /** Group A base address. */
  url: string;
  /** Group B base address (token endpoint). */
  partnerUrl: string;
  concurrency?: number;
  /** Measured requests (after the warm-up). */
  requests?: number;
  warmupRequests?: number;
  /** Stop early after this long (the figures cover the requests actually made). */
  maxDurationMs?: number;
  clientId?: string;
  clientSecret?: string;
}

export interface CreatePaymentRate {
  concurrency: number;
  requests: number;
  errors: number;
  durationMs: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU (user + system) per request, when the server is alone in its process. */
  serverCpuMsPerRequest: number;
}

/** One instalment of a payment plan, as Payflow's create-payment request takes it. */
export interface BenchInstallment {
  readonly date: string;
  readonly grossAmount: number;
}

/**
 * The create-payment request the sandbox benches send: one service line of 1,249.50 NOK
 * for `orderNumber` (also its internalRef), with these callbacks and, optionally, a plan.
 */
export function benchPaymentRequest(
  orderNumber: string,
  callback: Readonly<Record<string, string>>,
  installments?: readonly BenchInstallment[],
): Record<string, unknown> {
  return {
    customer: {
      type: 'person',
      firstName: 'Kari',
      lastName: 'Nordmann',
      email: 'kari@example.com',
    },
    order: { orderNumber, objects: [{ type: 'newCar', brand: 'Volvo', model: 'EX30' }] },
    payment: {
      currency: 'NOK',
      totalGrossAmount: 1249.5,
      totalNetAmount: 999.6,
      dueDate: '2030-01-31',
      internalRef: orderNumber,
      items: [
        {
          description: 'Service',
          netUnitPrice: 999.6,
          grossUnitPrice: 1249.5,
          grossTotalPrice: 1249.5,
          netTotalPrice: 999.6,
          vatAmount: 249.9,
          quantity: 1,
          taxRate: 25,
          lineType: 'regular',
        },
      ],
      ...(installments ? { installments } : {}),
    },
    callback,
  };
}

const PAYMENT_BODY = JSON.stringify(
  benchPaymentRequest('SO-BENCH', { url: 'https://example.invalid/hook', api_key: 'k' }),
);

async function fetchBenchToken(
  partnerUrl: string,
  clientId: string,
  secret: string,
): Promise<string> {
  const response = await fetch(`${partnerUrl}/auth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  if (!response.ok) throw new Error(`token request failed: ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function serverCpuMicros(url: string): Promise<number> {
  const response = await fetch(`${url}/sandbox/stats`);
  const stats = (await response.json()) as { cpuMicros: { user: number; system: number } };
  return stats.cpuMicros.user + stats.cpuMicros.system;
}

/** Drives POST /api/payments at a fixed concurrency and measures it. */
export async function measureCreatePaymentRate(
  options: CreatePaymentRateOptions,
): Promise<CreatePaymentRate> {
  const concurrency = options.concurrency ?? 64;
  const total = options.requests ?? 20_000;
  const warmup = options.warmupRequests ?? 2_000;
  const maxDurationMs = options.maxDurationMs ?? 30_000;
  const token = await fetchBenchToken(
    options.partnerUrl,
    options.clientId ?? 'sandbox-client',
    options.clientSecret ?? 'sandbox-secret',
  );
  const origin = new URL(options.url);
  const basePath = origin.pathname.replace(/\/$/, '');
  const pool = new Pool(origin.origin, { connections: concurrency, pipelining: 1 });
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const path = `${basePath}/api/payments`;

  const run = async (count: number, latencies: Float64Array | undefined, deadline: number) => {
    let issued = 0;
    let done = 0;
    let errors = 0;
    const worker = async (): Promise<void> => {
      while (issued < count && performance.now() < deadline) {
        issued++;
        const started = performance.now();
        const response = await pool.request({ path, method: 'POST', headers, body: PAYMENT_BODY });
        await response.body.dump();
        if (response.statusCode !== 200) errors++;
        if (latencies) latencies[done] = performance.now() - started;
        done++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return { done, errors };
  };

  try {
    await run(warmup, undefined, Infinity);
    const latencies = new Float64Array(total);
    const cpuBefore = await serverCpuMicros(options.url);
    const started = performance.now();
    const { done, errors } = await run(total, latencies, started + maxDurationMs);
    const durationMs = performance.now() - started;
    const cpuAfter = await serverCpuMicros(options.url);
    const sorted = latencies.subarray(0, done).sort();
    return {
      concurrency,
      requests: done,
      errors,
      durationMs: round(durationMs, 1),
      requestsPerSecond: round((done / durationMs) * 1000, 0),
      p50Ms: round(nearestRank(sorted, 0.5), 3),
      p99Ms: round(nearestRank(sorted, 0.99), 3),
      serverCpuMsPerRequest: round((cpuAfter - cpuBefore) / 1000 / Math.max(done, 1), 4),
    };
  } finally {
    await pool.close();
  }
}

function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

export interface SandboxChildOptions {
  /** SANDBOX_LATENCY_MS: fixed latency added to every Payflow call. Default 0. */
  latencyMs?: number;
  /** More sandbox variables (e.g. SANDBOX_WEBHOOK_CA_FILE). */
  env?: Record<string, string>;
}

/** Starts `node dist/src/sandbox/main.js` on an ephemeral port. */
export async function startSandboxChild(options: SandboxChildOptions = {}): Promise<{
  url: string;
  partnerUrl: string;
  /** The child's process id (for CPU and memory figures from /proc). */
  pid: number;
  stop(): Promise<void>;
}> {
  const main = fileURLToPath(new URL('../src/sandbox/main.js', import.meta.url));
  const child: ChildProcess = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      SANDBOX_PORT: '0',
      SANDBOX_LOG_LEVEL: 'warn',
      SANDBOX_LATENCY_MS: String(options.latencyMs ?? 0),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error('the sandbox did not start within 10 s')),
      10_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /group A (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox exited with ${String(code)}`));
    });
  });
  return {
    url,
    partnerUrl: `${url}/partner`,
    pid: child.pid ?? 0,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function main(): Promise<void> {
  const requests = Number(process.env.BENCH_REQUESTS ?? 20_000);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 64);

  const child = await startSandboxChild();
  let childRate: CreatePaymentRate;
  try {
    childRate = await measureCreatePaymentRate({ ...child, requests, concurrency });
  } finally {
    await child.stop();
  }
  print('child process', childRate);

  const inProcess = await startSandbox({ port: 0 });
  let inProcessRate: CreatePaymentRate;
  try {
    inProcessRate = await measureCreatePaymentRate({ ...inProcess, requests, concurrency });
  } finally {
    await inProcess.close();
  }
  print('in process', { ...inProcessRate, serverCpuMsPerRequest: Number.NaN });

  const result = {
    name: 'sandbox: POST /api/payments',
    date: new Date().toISOString(),
    node: process.version,
    concurrency,
    requests: childRate.requests,
    requestsPerSecond: childRate.requestsPerSecond,
    p50Ms: childRate.p50Ms,
    p99Ms: childRate.p99Ms,
    errors: childRate.errors,
    serverCpuMsPerRequest: childRate.serverCpuMsPerRequest,
    mode: 'child process',
    inProcess: {
      requests: inProcessRate.requests,
      requestsPerSecond: inProcessRate.requestsPerSecond,
      p50Ms: inProcessRate.p50Ms,
      p99Ms: inProcessRate.p99Ms,
      errors: inProcessRate.errors,
    },
  };
  const file = fileURLToPath(new URL('../../bench/results/sandbox.json', import.meta.url));
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`wrote ${file}\n`);
}

function print(label: string, rate: CreatePaymentRate): void {
  const cpu = Number.isNaN(rate.serverCpuMsPerRequest)
    ? ''
    : `, server CPU ${rate.serverCpuMsPerRequest} ms/request`;
  process.stdout.write(
    `${label}: ${rate.requestsPerSecond} requests/s over ${rate.requests} requests ` +
      `(concurrency ${rate.concurrency}), p50 ${rate.p50Ms} ms, p99 ${rate.p99Ms} ms, ` +
      `${rate.errors} errors${cpu}\n`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
