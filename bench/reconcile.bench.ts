/**
 * Settlement reconciliation: speed and memory of reconciling one night of 300,000 lines
 * (BENCH_RECONCILE_LINES overrides) with SettlementReconciler, the code the pull, the
 * nightly run and `settlements reconcile` share.
 *
 * The night is written straight into Postgres (a file, its night and its lines, as a pull
 * leaves them) with the payments it settles: of every 20 lines, 14 settle a payment of the
 * bridge exactly, 1 for another amount (amount_mismatch), 2 a payment the bridge never
 * created (unknown_payment), 2 are refunds of one of the exact payments that match a refund
 * made, and 1 is a refund that matches none (refund_mismatch). The reconciliation runs
 * twice: the first matches and publishes (findings and totals into the outbox), the second
 * must find nothing new. Peak RSS is sampled every 10 ms over the first run.
 * `npm run build && node dist/bench/reconcile.bench.js`; writes bench/results/reconcile.json.
 */
import 'reflect-metadata';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openDataSource, runMigrations } from '../src/database/data-source.js';
import { Database } from '../src/database/database.js';
import { silentLogger } from '../src/logging/logger.js';
import { OutboxWriter } from '../src/outbox/outbox-writer.js';
import { InstallmentRepository } from '../src/payments/installment.repository.js';
import { PaymentStatusHistoryRepository } from '../src/payments/payment-status-history.repository.js';
import { PaymentRepository } from '../src/payments/payment.repository.js';
import { RefundRepository } from '../src/payments/refund.repository.js';
import { SettlementFindingsRepository } from '../src/settlements/reconcile/settlement-findings.repository.js';
import { SettlementLinesRepository } from '../src/settlements/reconcile/settlement-lines.repository.js';
import { SettlementReconciler } from '../src/settlements/reconcile/settlement-reconciler.js';
import { SettlementTotalsRepository } from '../src/settlements/reconcile/settlement-totals.repository.js';
import { SettlementRepository } from '../src/settlements/settlement.repository.js';
import { benchDatabaseName, dropDatabase, freshDatabase } from './pipeline/database.js';

const LINES = Number(process.env.BENCH_RECONCILE_LINES ?? 300_000);
const NIGHT = '2026-11-01';
const FILE_ID = '00000000-0000-4000-8000-000000000001';
const MB = 1024 * 1024;
const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** The night, its lines and the payments they settle, written by SQL. */
async function seed(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO settlement_files (id, organization_id, date_from, date_to, format, version,
         sha256, size_bytes, row_count, bad_row_count, content_type, trigger)
       VALUES ($1, 'org-1', $2, $2, 'standard', 1, repeat('0', 64), 0, $3, 0, 'text/csv', 'cli')`,
      [FILE_ID, NIGHT, LINES],
    );
    await client.query(
      `INSERT INTO settlement_nights (organization_id, settlement_date, format, status, file_id,
         attempts, pulled_at, tracked_by)
       VALUES ('org-1', $1, 'standard', 'pulled', $2, 1, now(), 'cli')`,
      [NIGHT, FILE_ID],
    );
    // Line i: k = i % 20. k < 14 exact, 14 mismatch, 15-16 unknown, 17-18 refund of the
    // payment of line i - 17 / i - 18 (matching a refund made), 19 a refund matching none.
    await client.query(
      `WITH g AS (SELECT i, i % 20 AS k, 10000 + (i % 997) * 100 AS amount
                    FROM generate_series(0, $2::int - 1) AS i)
       INSERT INTO settlement_lines (file_id, line_number, organization_id, settlement_date,
         payflow_payment_id, transaction_type, currency, gross_minor, fee_minor, net_minor,
         booked_at)
       SELECT $1::uuid, i + 2, 'org-1', $3::date,
              CASE WHEN k BETWEEN 17 AND 19 THEN 'pf-' || (i - k) ELSE 'pf-' || i END,
              CASE WHEN k >= 17 THEN 'refund' ELSE 'payment' END, 'NOK',
              CASE WHEN k >= 17 THEN -1000 - k ELSE amount END,
              CASE WHEN k >= 17 THEN 0 ELSE 150 END,
              CASE WHEN k >= 17 THEN -1000 - k ELSE amount - 150 END,
              $3::date + interval '12 hours'
         FROM g`,
      [FILE_ID, LINES, NIGHT],
    );
    await client.query(
      `INSERT INTO payments (id, order_id, organization_id, payflow_id, state, status, currency,
         total_gross_minor, total_net_minor, webhook_token, api_key_hash)
       SELECT gen_random_uuid(), 'order-' || i, 'org-1', 'pf-' || i, 'created', 'paid', 'NOK',
              10000 + (i % 997) * 100 + CASE WHEN i % 20 = 14 THEN 1 ELSE 0 END,
              10000 + (i % 997) * 100, 'token-' || i, '\\x00'
         FROM generate_series(0, $1::int - 1) AS i WHERE i % 20 < 15`,
      [LINES],
    );
    await client.query(
      `INSERT INTO refunds (payment_id, refund_ref, currency, gross_minor, net_minor)
       SELECT p.id, 'r-' || r.k, 'NOK', 1000 + r.k, 1000 + r.k
         FROM payments p CROSS JOIN (VALUES (17), (18)) AS r (k)
        WHERE (substring(p.payflow_id FROM 4)::int) % 20 = 0`,
    );
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

async function outboxRows(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox');
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const name = benchDatabaseName('reconcile');
  const url = await freshDatabase(name);
  const dataSource = await openDataSource({ url, poolSize: 4 });
  try {
    await runMigrations(dataSource);
    log(`seeding ${LINES} lines…`);
    await seed(url);
    const database = new Database(dataSource);
    const reconciler = new SettlementReconciler(
      database,
      new SettlementRepository(),
      new SettlementLinesRepository(),
      new SettlementFindingsRepository(),
      new SettlementTotalsRepository(),
      new PaymentRepository(),
      new InstallmentRepository(),
      new RefundRepository(),
      new PaymentStatusHistoryRepository(),
      OutboxWriter.forTopics({
        paymentStatus: 'payflow.payment-status.v1',
        settlements: 'payflow.settlements.v1',
        deadLetters: 'erp.orders.v1.dlq',
      }),
      { expectedWithinMs: 3 * 86_400_000 },
      silentLogger(),
    );
    const scope = { organizationId: 'org-1', from: NIGHT, to: NIGHT };
    const baselineRss = process.memoryUsage().rss;
    let peakRss = baselineRss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 10);
    const started = performance.now();
    const first = await reconciler.reconcile(scope, new Date(`${NIGHT}T23:00:00Z`));
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const outboxAfterFirst = await outboxRows(url);
    const againStarted = performance.now();
    const second = await reconciler.reconcile(scope, new Date(`${NIGHT}T23:00:00Z`));
    const againSeconds = (performance.now() - againStarted) / 1000;
    const outboxAfterSecond = await outboxRows(url);
    const expectedFindings = Math.floor(LINES / 20) * 4; // mismatch, 2 unknown, refund
    const report = {
      scenario: 'reconcile one night',
      lines: LINES,
      cpus: cpus().length,
      node: process.version,
      firstRun: {
        seconds: Number(seconds.toFixed(2)),
        linesPerSecond: Math.round(LINES / seconds),
        payments: first.payments,
        findingsOpened: first.opened,
        totalsPublished: first.totalsPublished,
        outboxRows: outboxAfterFirst,
        baselineRssMB: Number((baselineRss / MB).toFixed(1)),
        peakRssMB: Number((peakRss / MB).toFixed(1)),
        rssGrowthMB: Number(((peakRss - baselineRss) / MB).toFixed(1)),
      },
      secondRun: {
        seconds: Number(againSeconds.toFixed(2)),
        linesPerSecond: Math.round(LINES / againSeconds),
        findingsOpened: second.opened,
        totalsPublished: second.totalsPublished,
        newOutboxRows: outboxAfterSecond - outboxAfterFirst,
      },
      valid:
        first.lines === LINES &&
        first.payments === LINES - Math.floor(LINES / 20) * 3 &&
        first.opened === expectedFindings &&
        second.opened === 0 &&
        second.totalsPublished === 0 &&
        outboxAfterSecond === outboxAfterFirst,
    };
    log(JSON.stringify(report, null, 2));
    const file = fileURLToPath(new URL('../../bench/results/reconcile.json', import.meta.url));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
    log('written bench/results/reconcile.json');
    if (!report.valid) process.exitCode = 1;
  } finally {
    await dataSource.destroy();
    await dropDatabase(name);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
