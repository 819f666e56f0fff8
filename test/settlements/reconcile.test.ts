/**
 * Settlement reconciliation end to end (issue 29 §1): the worker as main.ts starts it,
 * Postgres, real Kafka, the sandbox's settlement rows (POST /sandbox/settlements) and the
 * real CLI. Each finding kind is produced against a payment created through the pipeline
 * or written directly, published once as `settlement.exception`, listed in the CSV; a late
 * line closes `not_settled`; reconciling twice publishes nothing new; the totals equal the
 * sum of their lines to the minor unit.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { PullSettlementHandler } from '../../src/settlements/pull/pull-settlement.handler.js';
import type { Worker } from '../../src/worker.js';
import { anEnvelope, anOrderId, isoDay, paymentRequestedData } from '../support/builders.js';
import { openTestPool } from '../support/database.js';
import { startPipeline, TopicReader, type Pipeline } from '../support/pipeline.js';
import { buildCli, runBinary } from '../cli/cli-test-kit.js';
import { outboxCount, seedSettlements } from './settlements-kit.js';

interface Exception {
  type: 'settlement.exception';
  organizationId: string;
  orderId: string | null;
  paymentId: string;
  data: {
    findingId: string;
    kind: string;
    subject: string;
    currency: string;
    expectedAmount: string | null;
    settledAmount: string;
  };
}
interface Reconciled {
  type: 'settlement.reconciled';
  organizationId: string;
  data: {
    settlementDate: string;
    currency: string;
    grossAmount: string;
    feeAmount: string;
    netAmount: string;
    lines: number;
    linesMatched: number;
    findings: number;
  };
}

const DAY = 86_400_000;
const tag = randomBytes(3).toString('hex');
const pf = (name: string): string => `pf-${tag}-${name}`;

describe('settlement reconciliation', () => {
  let pipeline: Pipeline;
  let worker: Worker;
  let topic: TopicReader;
  let db: pg.Pool;
  let pipelineOrder: string;
  let pipelinePayflowId: string;
  let pipelineGross: string;
  const night1 = isoDay(-2);
  const night2 = isoDay(-1);

  const exceptions = (): Exception[] =>
    topic
      .json<Exception | Reconciled>()
      .filter((e): e is Exception => e.type === 'settlement.exception');
  const reconciled = (): Reconciled[] =>
    topic
      .json<Exception | Reconciled>()
      .filter((e): e is Reconciled => e.type === 'settlement.reconciled');
  const pull = (date: string) =>
    worker.app
      .get(PullSettlementHandler)
      .execute({ organizationId: 'org-1', date, format: 'standard', trigger: 'cli' });
  const cli = (args: string[]) =>
    runBinary(['settlements', ...args], {
      DATABASE_URL: pipeline.database.url,
      KAFKA_BROKERS: pipeline.cluster.bootstrapServers,
      TOPIC_SETTLEMENTS: pipeline.topics.settlements,
      TOPIC_ORDERS: pipeline.topics.orders,
      TOPIC_PAYMENT_STATUS: pipeline.topics.status,
    });

  /** The settlement events in the outbox, by type. */
  async function outboxTypes(): Promise<Record<string, number>> {
    const { rows } = await db.query<{ type: string; n: number }>(
      `SELECT convert_from(value, 'UTF8')::jsonb ->> 'type' AS type, count(*)::int AS n
         FROM outbox WHERE topic = $1 GROUP BY 1`,
      [pipeline.topics.settlements],
    );
    return Object.fromEntries(rows.map((row) => [row.type, row.n]));
  }

  /** A payment of the bridge written directly: paid `paidDaysAgo` ago (by hand when `elsewhere`). */
  async function aPayment(
    name: string,
    grossMinor: number,
    paid: { daysAgo: number; elsewhere?: boolean } | null,
  ): Promise<{ id: string; orderId: string }> {
    const id = randomUUID();
    const orderId = `order-${tag}-${name}`;
    const created = new Date(Date.now() - (paid?.daysAgo ?? 0) * DAY - 60_000);
    await db.query(
      `INSERT INTO payments (id, order_id, organization_id, payflow_id, state, status, currency,
         total_gross_minor, total_net_minor, webhook_token, api_key_hash, created_at)
       VALUES ($1, $2, 'org-1', $3, 'created', $4, 'NOK', $5, $5, $6, '\\x00', $7)`,
      [
        id,
        orderId,
        pf(name),
        paid === null ? 'pending' : 'paid',
        grossMinor,
        randomUUID(),
        created,
      ],
    );
    if (paid !== null) {
      await db.query(
        `INSERT INTO payment_status_history (payment_id, provider_status, status, source, recorded_at)
         VALUES ($1, 'PAID', 'paid', $2, $3)`,
        [
          id,
          paid.elsewhere === true ? 'command' : 'webhook',
          new Date(Date.now() - paid.daysAgo * DAY),
        ],
      );
    }
    return { id, orderId };
  }

  beforeAll(async () => {
    [pipeline] = await Promise.all([startPipeline('reconcile'), buildCli()]);
    db = openTestPool(pipeline.database.url, 3);
    worker = await pipeline.startWorker(
      {},
      { SETTLEMENT_ENABLED: false, SETTLEMENT_TIMEZONE: 'UTC' },
    );
    topic = await TopicReader.start(pipeline.kafka, pipeline.topics.settlements);
    const status = await TopicReader.start(pipeline.kafka, pipeline.topics.status);
    pipelineOrder = anOrderId();
    await pipeline.publish([
      {
        key: pipelineOrder,
        value: anEnvelope(
          'order.payment_requested',
          paymentRequestedData({ paymentRef: 'PAY-77', externalRef: 'DMS/77' }),
          { orderId: pipelineOrder },
        ),
      },
    ]);
    await status.waitFor((messages) => messages.some((message) => message.key === pipelineOrder));
    await status.stop();
    const { rows } = await db.query<{ payflow_id: string; gross: string }>(
      `SELECT payflow_id, (total_gross_minor / 100.0)::numeric(20, 2)::text AS gross
         FROM payments WHERE order_id = $1`,
      [pipelineOrder],
    );
    pipelinePayflowId = rows[0]!.payflow_id;
    pipelineGross = rows[0]!.gross;
  }, 150_000);

  afterAll(async () => {
    await topic?.stop();
    await db?.end();
    await pipeline?.stop();
  });

  it('opens each kind of finding once, publishes it and the totals, and a late line closes not_settled', async () => {
    const mismatch = await aPayment('mismatch', 50_000, { daysAgo: 1 });
    await aPayment('twice', 30_000, { daysAgo: 1 });
    const refunded = await aPayment('refund', 80_000, { daysAgo: 1 });
    await db.query(
      `INSERT INTO refunds (payment_id, refund_ref, currency, gross_minor, net_minor)
       VALUES ($1, 'r-1', 'NOK', 10000, 10000)`,
      [refunded.id],
    );
    const late = await aPayment('late', 20_000, { daysAgo: 5 });
    await aPayment('elsewhere', 40_000, { daysAgo: 5, elsewhere: true });

    await seedSettlements(pipeline.sandbox, {
      date: night1,
      movements: [
        { paymentId: pipelinePayflowId, grossAmount: pipelineGross },
        { paymentId: pf('mismatch'), grossAmount: '499.00' },
        { paymentId: pf('unknown'), grossAmount: '10.00' },
        { paymentId: pf('twice'), grossAmount: '300.00' },
        { paymentId: pf('refund'), grossAmount: '800.00' },
        { paymentId: pf('refund'), grossAmount: '-150.00', type: 'refund' },
      ],
    });
    expect((await pull(night1)).outcome).toBe('stored');
    await topic.waitFor(() => exceptions().length >= 4 && reconciled().length >= 1);
    const byKind = (kind: string) => exceptions().filter((e) => e.data.kind === kind);
    expect(byKind('amount_mismatch')).toEqual([
      expect.objectContaining({
        orderId: mismatch.orderId,
        paymentId: pf('mismatch'),
        data: expect.objectContaining({ expectedAmount: '500.00', settledAmount: '499.00' }),
      }),
    ]);
    expect(byKind('unknown_payment')).toEqual([
      expect.objectContaining({
        orderId: null,
        paymentId: pf('unknown'),
        data: expect.objectContaining({ expectedAmount: null, settledAmount: '10.00' }),
      }),
    ]);
    expect(byKind('refund_mismatch')).toEqual([
      expect.objectContaining({
        orderId: refunded.orderId,
        data: expect.objectContaining({ expectedAmount: '100.00', settledAmount: '150.00' }),
      }),
    ]);
    expect(byKind('not_settled')).toEqual([
      expect.objectContaining({
        orderId: late.orderId,
        data: expect.objectContaining({ expectedAmount: '200.00', settledAmount: '0.00' }),
      }),
    ]);
    // Paid elsewhere and the pipeline's payment (settled exactly): no finding.
    expect(
      exceptions().filter(
        (e) => e.paymentId === pf('elsewhere') || e.paymentId === pipelinePayflowId,
      ),
    ).toEqual([]);
    const keys = topic.messages
      .filter((message) => message.value.includes('"settlement.exception"'))
      .map((message) => message.key);
    expect(keys.sort()).toEqual(
      exceptions()
        .map((e) => e.paymentId)
        .sort(),
    );

    // Night 2: the same payment again (settled_twice across nights), the late line.
    await seedSettlements(pipeline.sandbox, {
      date: night2,
      movements: [
        { paymentId: pf('twice'), grossAmount: '300.00' },
        { paymentId: pf('late'), grossAmount: '200.00' },
      ],
    });
    expect((await pull(night2)).outcome).toBe('stored');
    await topic.waitFor(() => byKind('settled_twice').length === 1);
    expect(byKind('settled_twice')[0]).toMatchObject({
      paymentId: pf('twice'),
      data: {
        expectedAmount: '300.00',
        settledAmount: '600.00',
        subject: `payment:${pf('twice')}`,
      },
    });
    const { rows: closed } = await db.query(
      `SELECT kind, closed_how FROM settlement_findings WHERE payflow_payment_id = $1`,
      [pf('late')],
    );
    expect(closed).toEqual([{ kind: 'not_settled', closed_how: 'settled' }]);
    expect(byKind('not_settled')).toHaveLength(1);

    // Totals equal the sum of their lines, to the minor unit.
    await topic.waitFor(() => reconciled().some((e) => e.data.settlementDate === night2));
    const { rows: sums } = await db.query<{
      date: string;
      gross: string;
      fee: string;
      net: string;
      n: number;
    }>(
      `SELECT to_char(l.settlement_date, 'YYYY-MM-DD') AS date, sum(gross_minor)::text AS gross,
              sum(fee_minor)::text AS fee, sum(net_minor)::text AS net, count(*)::int AS n
         FROM settlement_lines l JOIN settlement_nights n ON n.file_id = l.file_id
        GROUP BY 1 ORDER BY 1`,
    );
    const minor = (amount: string): string =>
      amount.replace('.', '').replace(/^(-?)0+(?=\d)/, '$1');
    for (const sum of sums) {
      const latest = reconciled()
        .filter((e) => e.data.settlementDate === sum.date)
        .at(-1)!;
      expect([
        minor(latest.data.grossAmount),
        minor(latest.data.feeAmount),
        minor(latest.data.netAmount),
      ]).toEqual([sum.gross, sum.fee, sum.net]);
      expect(latest.data.lines).toBe(sum.n);
    }
    const night1Totals = reconciled()
      .filter((e) => e.data.settlementDate === night1)
      .at(-1)!;
    // Matched on night 1: the pipeline's payment and the refund's payment line (the twice
    // line became settled_twice when night 2 came).
    expect(night1Totals.data).toMatchObject({ lines: 6, linesMatched: 2, findings: 4 });
  }, 80_000);

  it('reconciling twice publishes nothing new; the CSV lists every line and the totals', async () => {
    const before = await outboxCount(db, pipeline.topics.settlements);
    const dir = await mkdtemp(join(tmpdir(), 'reconcile-'));
    const csvPath = join(dir, 'finance.csv');
    const first = await cli(['reconcile', '--org', 'org-1', '--csv', csvPath]);
    expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: expect.any(String) });
    expect(first.out).toContain('0 finding(s) opened');
    expect(first.out).toContain('0 total(s) published');
    const second = await cli(['reconcile', '--from', night1, '--to', night2]);
    expect(second.code).toBe(0);
    expect(await outboxCount(db, pipeline.topics.settlements)).toBe(before);

    const csv = (await readFile(csvPath, 'utf8')).trimEnd().split('\r\n');
    const header = csv[0]!.split(',');
    const rows = csv
      .slice(1)
      .map((line): Record<string, string> =>
        Object.fromEntries(line.split(',').map((value, i) => [header[i] ?? '', value])),
      );
    const lineRows = rows.filter((row) => row['record'] === 'line');
    expect(lineRows).toHaveLength(8);
    expect(lineRows.find((row) => row['payflow_payment_id'] === pf('mismatch'))).toMatchObject({
      match: 'amount_mismatch',
      finding_kind: 'amount_mismatch',
      finding_state: 'open',
      expected_amount: '500.00',
      settled_amount: '499.00',
      gross_amount: '499.00',
    });
    expect(lineRows.find((row) => row['payflow_payment_id'] === pipelinePayflowId)).toMatchObject({
      match: 'matched',
      finding_id: '',
      payment_ref: 'PAY-77',
      external_ref: 'DMS/77',
    });
    expect(lineRows.filter((row) => row['match'] === 'settled_twice')).toHaveLength(2);
    const totalsRows = rows.filter((row) => row['record'] === 'totals');
    expect(totalsRows.map((row) => [row['settlement_date'], row['lines']])).toEqual([
      [night1, '6'],
      [night2, '2'],
    ]);
  }, 60_000);

  it('a person acknowledges a finding, audited; acknowledging again changes nothing', async () => {
    const finding = exceptions().find((e) => e.data.kind === 'unknown_payment')!;
    const done = await cli([
      'acknowledge',
      finding.data.findingId,
      '--reason',
      'test charge',
      '--by',
      'finance',
    ]);
    expect(done.code).toBe(0);
    expect(done.out).toContain('acknowledged by finance');
    const again = await cli(['acknowledge', finding.data.findingId, '--reason', 'again']);
    expect(again.code).toBe(0);
    expect(again.out).toContain('already closed');
    const { rows } = await db.query(
      `SELECT closed_how, closed_reason, closed_by FROM settlement_findings WHERE id = $1`,
      [finding.data.findingId],
    );
    expect(rows).toEqual([
      { closed_how: 'acknowledged', closed_reason: 'test charge', closed_by: 'finance' },
    ]);
    const { rows: audit } = await db.query(
      `SELECT actor, details->>'findingId' AS finding FROM operator_actions WHERE action = 'acknowledge_finding'`,
    );
    expect(audit).toEqual([{ actor: 'finance', finding: finding.data.findingId }]);
    // Not opened again by the next reconciliation while its amounts stand.
    const before = await outboxCount(db, pipeline.topics.settlements);
    expect((await cli(['reconcile'])).code).toBe(0);
    expect(await outboxCount(db, pipeline.topics.settlements)).toBe(before);
  }, 60_000);
  it('a new version of a night replaces its lines; a corrected amount closes its finding', async () => {
    await seedSettlements(pipeline.sandbox, {
      date: night1,
      movements: [{ paymentId: pf('extra'), grossAmount: '5.00' }],
    });
    const seen = exceptions().length;
    expect((await pull(night1)).outcome).toBe('changed');
    await topic.waitFor(() => exceptions().length > seen);
    // Only the new line's finding: the lines of version 1 are not counted twice.
    expect(
      exceptions()
        .slice(seen)
        .map((e) => [e.data.kind, e.paymentId]),
    ).toEqual([['unknown_payment', pf('extra')]]);
    const { rows: lines } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM settlement_lines l
         JOIN settlement_nights n ON n.file_id = l.file_id WHERE n.settlement_date = $1::date`,
      [night1],
    );
    expect(lines[0]!.n).toBe(7);
    await topic.waitFor(() =>
      reconciled().some((e) => e.data.settlementDate === night1 && e.data.lines === 7),
    );

    // The amount due turns out to be what was settled: the mismatch closes as settled.
    await db.query(`UPDATE payments SET total_gross_minor = 49900 WHERE payflow_id = $1`, [
      pf('mismatch'),
    ]);
    expect((await cli(['reconcile', '--from', night1, '--to', night1])).code).toBe(0);
    const { rows } = await db.query(
      `SELECT kind, closed_how FROM settlement_findings WHERE payflow_payment_id = $1`,
      [pf('mismatch')],
    );
    expect(rows).toEqual([{ kind: 'amount_mismatch', closed_how: 'settled' }]);
  }, 60_000);

  it('a refund recorded later closes refund_mismatch; settled_twice closed by a person stays closed', async () => {
    // The refund line of 150.00 matched no refund (only 100.00 was made); the bridge now
    // records the second refund of 150.00, and the next reconciliation finds them agreeing.
    const { rows: refunded } = await db.query<{ id: string }>(
      `SELECT id::text AS id FROM payments WHERE payflow_id = $1`,
      [pf('refund')],
    );
    await db.query(
      `INSERT INTO refunds (payment_id, refund_ref, currency, gross_minor, net_minor)
       VALUES ($1, 'r-2', 'NOK', 15000, 15000)`,
      [refunded[0]!.id],
    );
    const twice = exceptions().find((e) => e.data.kind === 'settled_twice')!;
    const done = await cli([
      'acknowledge',
      twice.data.findingId,
      '--reason',
      'Payflow reverses the second payout (case 4711)',
      '--by',
      'finance',
    ]);
    expect(done.code).toBe(0);
    const before = await outboxTypes();
    expect((await cli(['reconcile', '--org', 'org-1'])).code).toBe(0);

    const { rows } = await db.query(
      `SELECT kind, closed_how FROM settlement_findings
        WHERE payflow_payment_id = ANY($1::text[]) ORDER BY kind`,
      [[pf('refund'), pf('twice')]],
    );
    expect(rows).toEqual([
      { kind: 'refund_mismatch', closed_how: 'settled' },
      { kind: 'settled_twice', closed_how: 'acknowledged' },
    ]);
    // Closing opens nothing (the acknowledged finding was not opened again): the only new
    // event is night 1's totals, whose matched lines and findings changed.
    const after = await outboxTypes();
    expect(after['settlement.exception']).toBe(before['settlement.exception']);
    expect(after['settlement.reconciled']).toBe((before['settlement.reconciled'] ?? 0) + 1);
    const { rows: totals } = await db.query(
      `SELECT lines, lines_matched, findings FROM settlement_totals WHERE settlement_date = $1::date`,
      [night1],
    );
    // Matched: the pipeline's, the corrected mismatch, the 800.00 payment and now its refund;
    // findings: the two unknown payments and settled_twice (acknowledged, still a finding).
    expect(totals).toEqual([{ lines: 7, lines_matched: 4, findings: 3 }]);
  }, 60_000);
});
