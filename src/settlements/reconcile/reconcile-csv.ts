/**
 * Finance's spreadsheet of a reconciliation (`settlements reconcile --csv FILE`): one row
 * per current settlement line with its match and its finding, then one totals row per
 * organization, settlement date and currency. UTF-8, comma-separated, a header row, CRLF
 * line ends (RFC 4180). Columns (docs/operations.md, "Settlement reconciliation"):
 *
 *   record            `line` or `totals`
 *   organization_id, settlement_date, currency
 *   file_id, line_number              the file version and where the row starts in it
 *   payflow_payment_id, installment_id, transaction_type, booked_at, internal_ref,
 *   order_number                      as in the settlement file
 *   payment_ref, external_ref         the ERP's references of the line's payment, when it is
 *                                     one of the bridge's (order.payment_requested)
 *   gross_amount, fee_amount, net_amount   decimal text in major units (totals: the sums)
 *   match             matched, amount_mismatch, unknown_payment, settled_twice,
 *                     refund_mismatch
 *   finding_id, finding_kind, finding_state (open, settled, acknowledged),
 *   expected_amount, settled_amount   the line's finding, when it has one
 *   lines, lines_matched, findings    totals rows only
 *
 * Text that a spreadsheet would run as a formula (starting with = + - @) is prefixed with
 * an apostrophe; amounts are written as they are. Streams: one page of lines at a time.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Sql } from '../../database/database.js';
import { formatMinorUnits } from '../../money/money.js';
import type { PaymentRepository } from '../../payments/payment.repository.js';
import type { SettlementRepository } from '../settlement.repository.js';
import type { FindingRow, SettlementFindingsRepository } from './settlement-findings.repository.js';
import type { SettlementLinesRepository } from './settlement-lines.repository.js';
import type { SettlementTotalsRepository } from './settlement-totals.repository.js';
import { FIRST_DATE, LAST_DATE, type ReconcileScope } from './settlement-reconciler.js';

export const RECONCILE_CSV_COLUMNS = [
  'record',
  'organization_id',
  'settlement_date',
  'currency',
  'file_id',
  'line_number',
  'payflow_payment_id',
  'installment_id',
  'transaction_type',
  'booked_at',
  'internal_ref',
  'order_number',
  'payment_ref',
  'external_ref',
  'gross_amount',
  'fee_amount',
  'net_amount',
  'match',
  'finding_id',
  'finding_kind',
  'finding_state',
  'expected_amount',
  'settled_amount',
  'lines',
  'lines_matched',
  'findings',
] as const;
type Column = (typeof RECONCILE_CSV_COLUMNS)[number];
type CsvRecord = Partial<Record<Column, string | number | null>>;

const PAGE = 5_000;

function field(value: string | number | null | undefined, text: boolean): string {
  if (value === null || value === undefined) return '';
  let out = String(value);
  if (text && /^[=+\-@\t\r]/.test(out)) out = `'${out}`;
  return /[",\r\n]/.test(out) ? `"${out.replace(/"/g, '""')}"` : out;
}

const AMOUNTS = new Set<Column>([
  'gross_amount',
  'fee_amount',
  'net_amount',
  'expected_amount',
  'settled_amount',
]);

function row(record: CsvRecord): string {
  return `${RECONCILE_CSV_COLUMNS.map((column) => field(record[column], !AMOUNTS.has(column))).join(',')}\r\n`;
}

export interface ReconcileCsvSources {
  readonly settlements: SettlementRepository;
  readonly payments: PaymentRepository;
  readonly lines: SettlementLinesRepository;
  readonly findings: SettlementFindingsRepository;
  readonly totals: SettlementTotalsRepository;
}

/** Writes the spreadsheet of `scope` to `out`; returns the line and totals rows written. */
export async function writeReconcileCsv(
  sql: Sql,
  sources: ReconcileCsvSources,
  scope: ReconcileScope,
  out: Writable,
): Promise<{ lines: number; totals: number }> {
  const write = async (text: string): Promise<void> => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const range = {
    organizationId: scope.organizationId,
    from: scope.from ?? FIRST_DATE,
    to: scope.to ?? LAST_DATE,
  };
  await write(`${RECONCILE_CSV_COLUMNS.join(',')}\r\n`);
  let lines = 0;
  const nights = await sources.settlements.nights(sql, range);
  for (const night of nights) {
    if (night.status !== 'pulled' || night.fileId === null) continue;
    let after = 0;
    for (;;) {
      const page = await sources.lines.page(sql, night.fileId, after, PAGE);
      if (page.length === 0) break;
      const keys = page.flatMap((line) =>
        line.findingKind === null ? [] : [`${line.findingKind}|${line.subjectKey ?? ''}`],
      );
      const findings = await sources.findings.latestOf(sql, [...new Set(keys)]);
      const payflowIds = page.flatMap((line) =>
        line.payflowPaymentId === null ? [] : [line.payflowPaymentId],
      );
      const payments = new Map(
        (await sources.payments.settlementFacts(sql, [...new Set(payflowIds)])).map((payment) => [
          payment.payflowId,
          payment,
        ]),
      );
      let text = '';
      for (const line of page) {
        const money = (minor: number): string => formatMinorUnits(minor, line.currency);
        const ours =
          line.payflowPaymentId === null ? undefined : payments.get(line.payflowPaymentId);
        const finding: FindingRow | undefined =
          line.findingKind === null
            ? undefined
            : findings.get(`${line.findingKind}|${line.subjectKey ?? ''}`);
        text += row({
          record: 'line',
          organization_id: line.organizationId,
          settlement_date: line.settlementDate,
          currency: line.currency,
          file_id: line.fileId,
          line_number: line.lineNumber,
          payflow_payment_id: line.payflowPaymentId,
          installment_id: line.installmentId,
          transaction_type: line.transactionType,
          booked_at: line.bookedAt,
          internal_ref: line.internalRef,
          order_number: line.orderNumber,
          payment_ref: ours?.paymentRef ?? null,
          external_ref: ours?.externalRef ?? null,
          gross_amount: money(line.grossMinor),
          fee_amount: money(line.feeMinor),
          net_amount: money(line.netMinor),
          match: line.match,
          finding_id: finding?.id ?? null,
          finding_kind: line.findingKind,
          finding_state: finding === undefined ? null : (finding.closedHow ?? 'open'),
          expected_amount:
            finding?.expectedMinor === undefined || finding.expectedMinor === null
              ? null
              : money(finding.expectedMinor),
          settled_amount: finding === undefined ? null : money(finding.settledMinor),
        });
      }
      await write(text);
      lines += page.length;
      after = page[page.length - 1]!.lineNumber;
    }
  }
  const totals = await sources.totals.list(sql, range);
  for (const total of totals) {
    const money = (minor: number): string => formatMinorUnits(minor, total.currency);
    await write(
      row({
        record: 'totals',
        organization_id: total.organizationId,
        settlement_date: total.settlementDate,
        currency: total.currency,
        gross_amount: money(total.grossMinor),
        fee_amount: money(total.feeMinor),
        net_amount: money(total.netMinor),
        lines: total.lines,
        lines_matched: total.linesMatched,
        findings: total.findings,
      }),
    );
  }
  return { lines, totals: totals.length };
}
