/**
 * The reconciliation as an operator sees it (the console's Reconciliation page and an
 * order's page): the totals of each settlement night per currency, and the findings, money
 * in the currency's decimals (formatMinorUnits). A person's reason and name are shown
 * sanitized (no e-mail, phone or secret).
 */
import type { FindingRow } from '../../settlements/reconcile/settlement-findings.repository.js';
import type {
  LineForCsv,
  LineTotals,
} from '../../settlements/reconcile/settlement-lines.repository.js';
import { sanitizeText } from '../masking/sanitize-text.js';
import { amountView } from '../order-show/order-show.query.js';
import type { AmountView } from '../order-show/order-show.view.js';

/** The totals of one organization's night in one currency. */
export interface NightTotalsView {
  readonly organizationId: string;
  readonly settlementDate: string;
  readonly currency: string;
  readonly gross: AmountView;
  readonly fee: AmountView;
  readonly net: AmountView;
  readonly lines: number;
  readonly linesMatched: number;
  readonly findings: number;
}

/** One finding: open, or closed (`settled` by a later line, or `acknowledged` by a person). */
export interface FindingView {
  readonly id: string;
  readonly kind: string;
  readonly organizationId: string;
  readonly payflowPaymentId: string;
  readonly installmentId: string | null;
  /** The order's id, for the link to its page; null when the bridge knows no order. */
  readonly orderId: string | null;
  /** Null where nothing was due (an unknown payment). */
  readonly expected: AmountView | null;
  readonly settled: AmountView;
  /** ISO 8601. */
  readonly openedAt: string;
  readonly open: boolean;
  readonly closedAt: string | null;
  readonly closedHow: 'settled' | 'acknowledged' | null;
  readonly closedReason: string | null;
  readonly closedBy: string | null;
}

/** One current settlement line of a payment, with what the reconciliation made of it. */
export interface SettlementLineView {
  readonly settlementDate: string;
  readonly payflowPaymentId: string | null;
  readonly installmentId: string | null;
  readonly transactionType: string;
  readonly gross: AmountView;
  readonly fee: AmountView;
  readonly net: AmountView;
  readonly bookedAt: string;
  /** `matched`, a finding's kind, or null before the first reconciliation. */
  readonly match: string | null;
  readonly fileId: string;
  readonly lineNumber: number;
}

const money = (minor: number, currency: string): AmountView => amountView(String(minor), currency);

export function nightTotalsView(row: LineTotals): NightTotalsView {
  return {
    organizationId: row.organizationId,
    settlementDate: row.settlementDate,
    currency: row.currency.trim(),
    gross: money(row.grossMinor, row.currency),
    fee: money(row.feeMinor, row.currency),
    net: money(row.netMinor, row.currency),
    lines: row.lines,
    linesMatched: row.linesMatched,
    findings: row.findings,
  };
}

export function findingView(row: FindingRow): FindingView {
  return {
    id: row.id,
    kind: row.kind,
    organizationId: row.organizationId,
    payflowPaymentId: row.payflowPaymentId,
    installmentId: row.installmentId,
    orderId: row.orderId,
    expected: row.expectedMinor === null ? null : money(row.expectedMinor, row.currency),
    settled: money(row.settledMinor, row.currency),
    openedAt: row.openedAt.toISOString(),
    open: row.closedAt === null,
    closedAt: row.closedAt?.toISOString() ?? null,
    closedHow: row.closedHow,
    closedReason: row.closedReason === null ? null : sanitizeText(row.closedReason),
    closedBy: row.closedBy === null ? null : sanitizeText(row.closedBy),
  };
}

export function settlementLineView(row: LineForCsv): SettlementLineView {
  return {
    settlementDate: row.settlementDate,
    payflowPaymentId: row.payflowPaymentId,
    installmentId: row.installmentId,
    transactionType: row.transactionType,
    gross: money(row.grossMinor, row.currency),
    fee: money(row.feeMinor, row.currency),
    net: money(row.netMinor, row.currency),
    bookedAt: row.bookedAt,
    match: row.match,
    fileId: row.fileId,
    lineNumber: row.lineNumber,
  };
}
