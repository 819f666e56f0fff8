/**
 * One settlement pull in a process of its own, for `npm run bench:settlements`: the same
 * PullSettlementHandler the worker and the CLI run, against the database and the sandbox
 * named in the environment. It warms up on an empty night (modules, JIT, token, pool),
 * collects garbage, takes the baseline, then samples memory every 5 ms while it pulls
 * BENCH_DATE, and prints one JSON line with the figures.
 */
import 'reflect-metadata';
import { silentLogger } from '../../src/logging/logger.js';
import { loadDatabaseConfig } from '../../src/config/app-config.js';
import { openDataSource } from '../../src/database/data-source.js';
import { Database } from '../../src/database/database.js';
import { OutboxCommitted } from '../../src/outbox/outbox-committed.js';
import { OutboxWriter } from '../../src/outbox/outbox-writer.js';
import { PayflowClient } from '../../src/payflow/payflow.client.js';
import { PullSettlementHandler } from '../../src/settlements/pull/pull-settlement.handler.js';
import { SettlementRepository } from '../../src/settlements/settlement.repository.js';

interface Memory {
  rss: number;
  heapUsed: number;
  arrayBuffers: number;
  external: number;
}

const need = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
};

function snapshot(): Memory {
  const usage = process.memoryUsage();
  return {
    rss: usage.rss,
    heapUsed: usage.heapUsed,
    arrayBuffers: usage.arrayBuffers,
    external: usage.external,
  };
}

async function main(): Promise<void> {
  // DATABASE_URL (its sslmode too), DATABASE_SSL_CA_FILE and DATABASE_PASSWORD, as the worker.
  const dataSource = await openDataSource({
    database: loadDatabaseConfig(process.env),
    poolSize: 4,
  });
  const database = new Database(dataSource);
  const client = new PayflowClient(
    {
      baseUrl: need('PAYFLOW_BASE_URL'),
      partnerBaseUrl: need('PAYFLOW_PARTNER_BASE_URL'),
      tokenUrl: undefined,
      clientId: 'sandbox-client',
      clientSecret: 'sandbox-secret',
      connectTimeoutMs: 5_000,
      requestTimeoutMs: 60_000,
      connections: 4,
    },
    silentLogger(),
  );
  const handler = new PullSettlementHandler(
    database,
    new SettlementRepository(),
    OutboxWriter.forTopics({
      paymentStatus: 'payflow.payment-status.v1',
      settlements: 'payflow.settlements.v1',
      deadLetters: 'erp.orders.v1.dlq',
    }),
    OutboxCommitted.withoutRelay(),
    client,
    silentLogger(),
  );
  const night = (date: string) =>
    ({ organizationId: 'org-1', date, format: 'standard', trigger: 'cli' }) as const;
  try {
    await handler.execute(night(need('BENCH_WARMUP_DATE')));
    // Present because the benchmark starts this process with --expose-gc.
    (globalThis as { gc?: () => void }).gc?.();
    const baseline = snapshot();
    const peak = { ...baseline };
    const sampler = setInterval(() => {
      const now = snapshot();
      peak.rss = Math.max(peak.rss, now.rss);
      peak.heapUsed = Math.max(peak.heapUsed, now.heapUsed);
      peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers);
      peak.external = Math.max(peak.external, now.external);
    }, 5);
    const started = performance.now();
    const result = await handler.execute(night(need('BENCH_DATE')));
    const durationMs = performance.now() - started;
    clearInterval(sampler);
    process.stdout.write(
      `${JSON.stringify({
        outcome: result.outcome,
        fileId: result.file?.fileId,
        rows: result.file?.rows ?? 0,
        badRows: result.file?.badRows ?? 0,
        sizeBytes: result.file?.sizeBytes ?? 0,
        durationMs,
        baseline,
        peak,
      })}\n`,
    );
  } finally {
    await client.close();
    await dataSource.destroy();
  }
}

await main();
