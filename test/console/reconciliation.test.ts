/**
 * The console's Reconciliation page (`GET /console/reconciliation`) and its action
 * (`POST /console/reconciliation/findings/{id}/acknowledge`, form: `reason`), over plain
 * HTTP without a browser, against the real worker (Postgres of its own, built by the
 * migrations; the run's Kafka; the Payflow sandbox). An operator signs in with the token as
 * a person does; a viewer's session is opened in the worker's own session store (as an
 * OpenID sign-in would). The orders and payments are written by SQL of the test's own; the
 * settlement lines, findings and totals through the reconciliation's repositories, as a
 * reconciliation writes them.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { sqlOf, type Sql } from '../../src/database/database.js';
import { ReconciliationQuery } from '../../src/operator/reconciliation/reconciliation.query.js';
import { SettlementFindingsRepository } from '../../src/settlements/reconcile/settlement-findings.repository.js';
import { SettlementLinesRepository } from '../../src/settlements/reconcile/settlement-lines.repository.js';
import { SettlementTotalsRepository } from '../../src/settlements/reconcile/settlement-totals.repository.js';
import type { Worker } from '../../src/worker.js';
import { openTestPool } from '../support/database.js';
import { startPipeline, type Pipeline } from '../support/pipeline.js';
import { signIn, viewer, type Session } from './console-session.js';

const TOKEN = 'console-token-for-the-reconciliation-test-0123456789';
const OPERATOR = 'Olga Reconcile';
const ORG = 'org-rec-1';
const ORDER_A = 'SO-REC-A';
const ORDER_B = 'SO-REC-B';

/** A settlement date two days ago (inside the page's default range of 31 days). */
const NIGHT = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);

describe('the Reconciliation page of the console, over HTTP', () => {
  let pipeline: Pipeline;
  let worker: Worker;
  let pool: pg.Pool;
  let sql: Sql;
  let operator: Session;
  let reader: Session;
  const findings = new SettlementFindingsRepository();
  /** The findings' ids: settled (closed), then the two open ones. */
  const ids = { settled: '', mismatch: '', unknown: '' };
  const ackPath = (id: string): string => `/console/reconciliation/findings/${id}/acknowledge`;

  const actions = async (action: string) =>
    (
      await pool.query<{ actor: string; outcome: string; orderId: string | null; details: object }>(
        `SELECT actor, outcome, order_id AS "orderId", details FROM operator_actions
          WHERE action = $1 ORDER BY id`,
        [action],
      )
    ).rows;

  beforeAll(async () => {
    pipeline = await startPipeline('console_reconciliation', { CONSOLE_TOKEN: TOKEN });
    worker = await pipeline.startWorker();
    pool = openTestPool(pipeline.database.url);
    sql = sqlOf(pool);
    for (const [orderId, payflowId] of [
      [ORDER_A, 'pf-rec-a'],
      [ORDER_B, 'pf-rec-b'],
    ] as const) {
      await sql.execute(
        `INSERT INTO orders (order_id, organization_id, order_number, state, currency)
         VALUES ($1, $2, $3, 'open', 'NOK')`,
        [orderId, ORG, `ON-${orderId}`],
      );
      await sql.execute(
        `INSERT INTO payments (id, order_id, organization_id, payflow_id, state, status, currency,
                               total_gross_minor, total_net_minor, webhook_token, api_key_hash,
                               event_id)
         VALUES ($1, $2, $3, $4, 'created', 'paid', 'NOK', 125000, 100000, $6, '\\x00', $5)`,
        [randomUUID(), orderId, ORG, payflowId, randomUUID(), `tok-${orderId}`],
      );
    }
    // The night's file and its one line for payment A, settled short (an amount mismatch).
    const fileId = randomUUID();
    await sql.execute(
      `INSERT INTO settlement_files (id, organization_id, date_from, date_to, format, version,
         sha256, size_bytes, row_count, bad_row_count, content_type, trigger)
       VALUES ($1, $2, $3, $3, 'standard', 1, repeat('0', 64), 1, 1, 0, 'text/csv', 'cli')`,
      [fileId, ORG, NIGHT],
    );
    await sql.execute(
      `INSERT INTO settlement_nights (organization_id, settlement_date, format, status,
                                      tracked_by, file_id, pulled_at)
       VALUES ($1, $2, 'standard', 'pulled', 'test', $3, now())`,
      [ORG, NIGHT, fileId],
    );
    const lines = new SettlementLinesRepository();
    await lines.insert(sql, fileId, [
      {
        lineNumber: 2,
        line: {
          settlementId: 'st-1',
          settlementDate: NIGHT,
          organizationId: ORG,
          paymentId: 'pf-rec-a',
          paymentNumber: null,
          installmentId: null,
          internalRef: null,
          orderNumber: `ON-${ORDER_A}`,
          transactionType: 'payment',
          currency: 'NOK',
          grossMinor: 120000,
          feeMinor: 2400,
          netMinor: 117600,
          bookedAt: `${NIGHT}T10:00:00.000Z`,
        },
      },
    ]);
    await lines.apply(sql, [
      {
        fileId,
        lineNumber: 2,
        match: 'amount_mismatch',
        findingKind: 'amount_mismatch',
        subjectKey: 'payment:pf-rec-a',
      },
    ]);
    const finding = (kind: 'amount_mismatch' | 'unknown_payment' | 'not_settled', pf: string) => ({
      kind,
      subjectKey: `payment:${pf}`,
      organizationId: ORG,
      payflowPaymentId: pf,
      installmentId: null,
      currency: 'NOK',
    });
    // Opened first and then settled by a later line: the oldest, and closed.
    const [settled] = await findings.open(sql, [
      {
        ...finding('not_settled', 'pf-rec-b'),
        orderId: ORDER_B,
        expectedMinor: 125000,
        settledMinor: 0,
      },
    ]);
    await findings.closeSettled(sql, ['pf-rec-b'], []);
    const [mismatch] = await findings.open(sql, [
      {
        ...finding('amount_mismatch', 'pf-rec-a'),
        orderId: ORDER_A,
        expectedMinor: 125000,
        settledMinor: 120000,
      },
    ]);
    const [unknown] = await findings.open(sql, [
      {
        ...finding('unknown_payment', 'pf-rec-x'),
        orderId: null,
        expectedMinor: null,
        settledMinor: 5000,
      },
    ]);
    ids.settled = settled!.id;
    ids.mismatch = mismatch!.id;
    ids.unknown = unknown!.id;
    await new SettlementTotalsRepository().storeChanged(sql, [
      {
        organizationId: ORG,
        settlementDate: NIGHT,
        currency: 'NOK',
        grossMinor: 1250000,
        feeMinor: 25000,
        netMinor: 1225000,
        lines: 10,
        linesMatched: 9,
        findings: 1,
      },
      {
        organizationId: ORG,
        settlementDate: NIGHT,
        currency: 'JPY',
        grossMinor: 1500,
        feeMinor: 30,
        netMinor: 1470,
        lines: 1,
        linesMatched: 1,
        findings: 0,
      },
    ]);
    [operator, reader] = await Promise.all([
      signIn(worker.managementUrl, { token: TOKEN, operator: OPERATOR }),
      viewer(worker),
    ]);
  }, 240_000);

  afterAll(async () => {
    await pool?.end();
    await pipeline?.stop();
  });

  const stored = async (id: string) =>
    (
      await pool.query<{
        closedHow: string | null;
        closedReason: string | null;
        closedBy: string | null;
      }>(
        `SELECT closed_how AS "closedHow", closed_reason AS "closedReason", closed_by AS "closedBy"
           FROM settlement_findings WHERE id = $1::bigint`,
        [id],
      )
    ).rows[0];

  it('shows the findings, open ones first, each linked to its order, and the totals', async () => {
    const page = await operator.get('/console/reconciliation');
    expect(page.status).toBe(200);
    expect(page.html).toContain('href="/console/reconciliation" aria-current="page"');
    const at = (id: string): number => page.html.indexOf(`id="finding-${id}"`);
    expect(at(ids.unknown)).toBeGreaterThan(0);
    expect(at(ids.unknown)).toBeLessThan(at(ids.mismatch));
    expect(at(ids.mismatch)).toBeLessThan(at(ids.settled));
    expect(page.html).toContain(`href="/console/orders/${ORDER_A}"`);
    expect(page.html).toContain(`href="/console/orders/${ORDER_B}"`);
    expect(page.html).toContain('1250.00 NOK');
    expect(page.html).toContain('1200.00 NOK');
    expect(page.html).toContain('2 open');
    // The totals, in the currency's decimals.
    for (const amount of ['12500.00', '250.00', '12250.00', '>1500<', '>30<', '>1470<']) {
      expect(page.html).toContain(amount);
    }
    expect(page.html).toContain(NIGHT);
    // An operator may acknowledge the open ones, not the closed one.
    expect(page.html).toContain(`action="${ackPath(ids.mismatch)}"`);
    expect(page.html).toContain(`action="${ackPath(ids.unknown)}"`);
    expect(page.html).not.toContain(`action="${ackPath(ids.settled)}"`);
  });

  it('pages the findings by keyset, open ones first', async () => {
    const query = new ReconciliationQuery({ sql });
    const seen: string[] = [];
    let cursor = '';
    for (let pages = 0; pages < 5; pages += 1) {
      const page = await query.page({ organizationId: ORG, from: NIGHT, to: NIGHT }, cursor, 1);
      seen.push(...page.findings.map((finding) => finding.id));
      if (page.next === null) break;
      cursor = page.next;
    }
    expect(seen).toEqual([ids.unknown, ids.mismatch, ids.settled]);
    const other = await query.page({ organizationId: 'org-none', from: NIGHT, to: NIGHT }, '');
    expect(other).toEqual(
      expect.objectContaining({ totals: [], findings: [], openFindings: 0, next: null }),
    );
  });

  it('shows a viewer no acknowledge form, and refuses a viewer’s acknowledgement (403)', async () => {
    const page = await reader.get('/console/reconciliation');
    expect(page.status).toBe(200);
    expect(page.html).toContain(`id="finding-${ids.mismatch}"`);
    expect(page.html).not.toContain('/acknowledge"');
    const answer = await reader.post(ackPath(ids.mismatch), {
      _csrf: reader.csrf,
      reason: 'viewer tries',
    });
    expect(answer.status).toBe(403);
    expect((await stored(ids.mismatch))?.closedHow).toBeNull();
    expect(await actions('acknowledge_finding')).toEqual([]);
    expect(await actions('action_refused')).toEqual([
      expect.objectContaining({ actor: 'Vera Viewer', outcome: 'refused' }),
    ]);
  });

  it('refuses a form without the CSRF token, and one without a reason; nothing changes', async () => {
    const forged = await operator.post(ackPath(ids.mismatch), { reason: 'no token' });
    expect(forged.status).toBe(403);
    const answer = await operator.post(ackPath(ids.mismatch), {
      _csrf: operator.csrf,
      reason: '   ',
    });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain('id="acknowledge-notice"');
    expect(answer.html).toContain('Acknowledgement refused');
    expect(answer.html).toContain('Nothing changed.');
    expect((await stored(ids.mismatch))?.closedHow).toBeNull();
    expect(await actions('acknowledge_finding')).toEqual([
      expect.objectContaining({
        actor: OPERATOR,
        outcome: 'refused',
        orderId: null,
        details: { findingId: ids.mismatch, why: 'CONSOLE.NO_REASON' },
      }),
    ]);
  });

  it('closes the finding for an operator, recorded without the reason’s text', async () => {
    const reason = 'Short payment agreed with the dealer';
    const answer = await operator.post(ackPath(ids.mismatch), { _csrf: operator.csrf, reason });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain('<strong>Acknowledged</strong>');
    expect(await stored(ids.mismatch)).toEqual({
      closedHow: 'acknowledged',
      closedReason: reason,
      closedBy: `${OPERATOR} (console)`,
    });
    const done = (await actions('acknowledge_finding')).filter((row) => row.outcome === 'done');
    expect(done).toEqual([
      {
        actor: OPERATOR,
        outcome: 'done',
        orderId: ORDER_A,
        details: {
          findingId: ids.mismatch,
          kind: 'amount_mismatch',
          paymentId: 'pf-rec-a',
          result: 'acknowledged',
          via: 'console',
        },
      },
    ]);
    // The page shows it closed: how, why and by whom; no form for it any more.
    expect(answer.html).not.toContain(`action="${ackPath(ids.mismatch)}"`);
    expect(answer.html).toContain(reason);
    expect(answer.html).toContain('1 open');
    // A second time: nothing changes, said so.
    const again = await operator.post(ackPath(ids.mismatch), { _csrf: operator.csrf, reason });
    expect(again.html).toContain('was already closed (acknowledged by Olga Reconcile (console))');
    const missing = await operator.post(ackPath('999999'), { _csrf: operator.csrf, reason });
    expect(missing.html).toContain('There is no settlement finding 999999');
  });

  it('shows the order’s settlement lines and findings on its page and timeline', async () => {
    const page = await reader.get(`/console/orders/${ORDER_A}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('id="settlement-title"');
    expect(page.html).toContain('1200.00 NOK');
    expect(page.html).toContain('24.00 NOK');
    expect(page.html).toContain('1176.00 NOK');
    expect(page.html).toContain('amount_mismatch');
    expect(page.html).toContain(`href="/console/reconciliation#finding-${ids.mismatch}"`);
    expect(page.html).toContain('Settlement finding amount mismatch for payment pf-rec-a');
    expect(page.html).toContain('Short payment agreed with the dealer');
    // The other order's page shows its own finding, not this one's.
    const other = await reader.get(`/console/orders/${ORDER_B}`);
    expect(other.html).toContain('Settlement finding not settled for payment pf-rec-b');
    expect(other.html).not.toContain('pf-rec-a');
  });
});
