/**
 * The settlement reconciliation (issue 29 §1): load, decide, record. For a scope
 * (an organization or all, a range of settlement dates or all), in batches of payments:
 *
 * 1. the Payflow payments on the current lines of the scope's nights, then those on the
 *    versions those nights replaced (a corrected file may have settled them; with no date
 *    range: every payment with an open finding), then the paid payments that may be
 *    `not_settled` (created before now − SETTLEMENT_EXPECTED_WITHIN, no payment line);
 * 2. for each batch, in one transaction: every current line of those payments (all nights)
 *    and what the bridge knows of them, matched by `matchPayment` (settlement-match.ts);
 *    each line's result stored, findings opened (each published once as
 *    `settlement.exception` through the outbox) and the findings no longer standing closed
 *    as `settled`;
 * 3. the totals of every night touched, stored; those new or changed are published as
 *    `settlement.reconciled`.
 *
 * Idempotent: a second run finds every finding open and every total unchanged, and writes
 * nothing to the outbox. Memory holds one batch of payments and their lines at a time.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Database, type Sql } from '../../database/database.js';
import { APP_LOGGER } from '../../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../../logging/logger.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentStatusHistoryRepository } from '../../payments/payment-status-history.repository.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { RefundRepository } from '../../payments/refund.repository.js';
import { SettlementRepository } from '../settlement.repository.js';
import { settlementExceptionEvent, settlementReconciledEvent } from './reconcile-events.js';
import { SettlementFindingsRepository, type FindingRow } from './settlement-findings.repository.js';
import { SettlementLinesRepository, type NightRef } from './settlement-lines.repository.js';
import {
  matchPayment,
  type Finding,
  type LineResult,
  type PaymentFacts,
} from './settlement-match.js';
import { SettlementTotalsRepository } from './settlement-totals.repository.js';

/** SETTLEMENT_EXPECTED_WITHIN, in milliseconds. */
export const RECONCILE_OPTIONS = Symbol('RECONCILE_OPTIONS');
export interface ReconcileOptions {
  readonly expectedWithinMs: number;
}

export interface ReconcileScope {
  readonly organizationId: string | null;
  /** Settlement dates, inclusive; null: every night. */
  readonly from: string | null;
  readonly to: string | null;
}

export interface ReconcileReport {
  readonly payments: number;
  readonly lines: number;
  readonly opened: number;
  readonly closed: number;
  readonly totalsPublished: number;
  readonly nights: readonly NightRef[];
}

/** Payments per batch (one transaction each). */
const PAYMENT_BATCH = 2_000;
export const FIRST_DATE = '0001-01-01';
export const LAST_DATE = '9999-12-31';

@Injectable()
export class SettlementReconciler {
  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(SettlementRepository) private readonly settlements: SettlementRepository,
    @Inject(SettlementLinesRepository) private readonly lines: SettlementLinesRepository,
    @Inject(SettlementFindingsRepository) private readonly findings: SettlementFindingsRepository,
    @Inject(SettlementTotalsRepository) private readonly totals: SettlementTotalsRepository,
    @Inject(PaymentRepository) private readonly payments: PaymentRepository,
    @Inject(InstallmentRepository) private readonly installments: InstallmentRepository,
    @Inject(RefundRepository) private readonly refunds: RefundRepository,
    @Inject(PaymentStatusHistoryRepository)
    private readonly history: PaymentStatusHistoryRepository,
    @Inject(OutboxWriter) private readonly outbox: OutboxWriter,
    @Inject(RECONCILE_OPTIONS) private readonly options: ReconcileOptions,
    @Optional() @Inject(APP_LOGGER) private readonly logger: AppLogger = silentLogger(),
  ) {}

  async reconcile(scope: ReconcileScope, now: Date = new Date()): Promise<ReconcileReport> {
    const sql = this.database.sql;
    const tally = { payments: 0, lines: 0, opened: 0, closed: 0 };
    const touched = new Map<string, NightRef>();
    const touch = (night: NightRef): void => {
      touched.set(`${night.organizationId}|${night.date}`, night);
    };
    const run = async (ids: readonly string[]): Promise<void> => {
      if (ids.length === 0) return;
      const result = await this.database.transaction((tx) => this.matchBatch(tx, ids, now, touch));
      tally.payments += ids.length;
      tally.lines += result.lines;
      tally.opened += result.opened;
      tally.closed += result.closed;
    };

    const range = {
      from: scope.from ?? FIRST_DATE,
      to: scope.to ?? LAST_DATE,
      organizationId: scope.organizationId,
    };
    // 1. The payments on the scope's current lines.
    const nights = (await this.settlements.nights(sql, range)).filter(
      (night) => night.status === 'pulled' && night.fileId !== null,
    );
    for (const night of nights) touch({ organizationId: night.organizationId, date: night.date });
    const fileIds = [...new Set(nights.map((night) => night.fileId!))];
    await this.eachPage(
      (after) => this.lines.paymentIdsOfFiles(sql, fileIds, after, PAYMENT_BATCH),
      run,
    );
    // 2. Payments that may have lost lines: those on the replaced versions of the scope's
    //    nights, or (no date range) every payment with an open finding, not matched above.
    const replaced = await this.settlements.replacedFiles(sql, range);
    const notMatched = async (ids: readonly string[]): Promise<void> =>
      run(await this.lines.notOnFiles(sql, ids, fileIds));
    await this.eachPage(
      (after) => this.lines.paymentIdsOfFiles(sql, replaced, after, PAYMENT_BATCH),
      notMatched,
    );
    if (scope.from === null) {
      await this.eachPage(
        (after) => this.findings.openPaymentIds(sql, scope.organizationId, after, PAYMENT_BATCH),
        notMatched,
      );
    }
    // 3. Paid payments that may be not_settled (no payment line at all).
    const createdBefore = new Date(now.getTime() - this.options.expectedWithinMs);
    await this.eachPage(
      (after) =>
        this.payments.paidPayflowIds(sql, {
          organizationId: scope.organizationId,
          createdBefore,
          after,
          limit: PAYMENT_BATCH,
        }),
      async (ids) => run(await this.lines.withoutPaymentLines(sql, ids)),
    );

    const published = await this.database.transaction(async (tx) => {
      const changed = await this.totals.storeChanged(
        tx,
        await this.lines.totals(tx, [...touched.values()]),
      );
      await this.outbox.append(tx, changed.map(settlementReconciledEvent), now);
      return changed.length;
    });
    const report = { ...tally, totalsPublished: published, nights: [...touched.values()] };
    this.logger.info(
      {
        organizationId: scope.organizationId,
        from: scope.from,
        to: scope.to,
        payments: report.payments,
        lines: report.lines,
        opened: report.opened,
        closed: report.closed,
        totalsPublished: report.totalsPublished,
      },
      'settlements reconciled',
    );
    return report;
  }

  /**
   * A person closes an open finding (`settlements acknowledge`): it stays closed, and is
   * not opened again while its amounts stay the same. Idempotent: a finding already
   * closed is returned as it is, with `changed` false.
   */
  async acknowledge(
    findingId: string,
    reason: string,
    by: string,
  ): Promise<{ changed: boolean; finding: FindingRow } | null> {
    return this.database.transaction(async (tx) => {
      const closed = await this.findings.acknowledge(tx, findingId, reason, by);
      if (closed !== null) return { changed: true, finding: closed };
      const finding = await this.findings.byId(tx, findingId);
      return finding === null ? null : { changed: false, finding };
    });
  }

  /** Calls `work` with each page `page` returns, keyset by the page's last id. */
  private async eachPage(
    page: (after: string) => Promise<string[]>,
    work: (ids: readonly string[]) => Promise<void>,
  ): Promise<void> {
    let after = '';
    for (;;) {
      const ids = await page(after);
      if (ids.length === 0) return;
      await work(ids);
      if (ids.length < PAYMENT_BATCH) return;
      after = ids[ids.length - 1]!;
    }
  }

  private async matchBatch(
    tx: Sql,
    payflowIds: readonly string[],
    now: Date,
    touch: (night: NightRef) => void,
  ): Promise<{ lines: number; opened: number; closed: number }> {
    const lines = await this.lines.currentOf(tx, payflowIds);
    const facts = await this.factsOf(tx, payflowIds);
    for (const line of lines)
      touch({ organizationId: line.organizationId, date: line.settlementDate });
    const linesOf = groupBy(lines, (line) => line.payflowPaymentId);
    const results: LineResult[] = [];
    const standing: Finding[] = [];
    const clock = { now, expectedWithinMs: this.options.expectedWithinMs };
    for (const id of payflowIds) {
      const match = matchPayment(id, facts.get(id) ?? null, linesOf.get(id) ?? [], clock);
      results.push(...match.lines);
      standing.push(...match.findings);
    }
    await this.lines.apply(tx, results);
    const closed = await this.findings.closeSettled(tx, payflowIds, standing);
    const opened = await this.findings.open(tx, standing);
    await this.outbox.append(tx, opened.map(settlementExceptionEvent), now);
    return { lines: lines.length, opened: opened.length, closed };
  }

  /** What the bridge knows of these Payflow payments (absent: never created by it). */
  private async factsOf(
    sql: Sql,
    payflowIds: readonly string[],
  ): Promise<Map<string, PaymentFacts>> {
    const payments = await this.payments.settlementFacts(sql, payflowIds);
    if (payments.length === 0) return new Map();
    const ids = payments.map((payment) => payment.paymentId);
    // One after another: a transaction's client runs one query at a time.
    const installments = await this.installments.settlementDue(sql, ids);
    const refunds = await this.refunds.settlementRefunds(sql, ids);
    const paid = await this.history.paidFacts(sql, ids);
    const paidOf = new Map(paid.map((row) => [row.paymentId, row]));
    const installmentsOf = groupBy(installments, (row) => row.paymentId);
    const refundsOf = groupBy(refunds, (row) => row.paymentId);
    return new Map(
      payments.map((payment) => [
        payment.payflowId,
        {
          payflowPaymentId: payment.payflowId,
          orderId: payment.orderId,
          organizationId: payment.organizationId,
          currency: payment.currency,
          totalGrossMinor: payment.totalGrossMinor,
          installments: installmentsOf.get(payment.paymentId) ?? [],
          refundsGrossMinor: (refundsOf.get(payment.paymentId) ?? []).map((row) => row.grossMinor),
          paidAt: paidOf.get(payment.paymentId)?.paidAt ?? null,
          paidElsewhere: paidOf.get(payment.paymentId)?.paidElsewhere ?? false,
        },
      ]),
    );
  }
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group === undefined) groups.set(key(row), [row]);
    else group.push(row);
  }
  return groups;
}
