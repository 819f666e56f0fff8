/**
 * The reconciliation's events on the settlements topic (schemas in
 * src/events/settlement-events.schema.ts), written to the outbox in the transaction that
 * opens the finding or stores the totals. Money is decimal text in major units beside
 * `currency`, as in `settlement.line`.
 *
 * - `settlement.exception`: one per finding, once, when it opens; keyed by the Payflow
 *   payment id.
 * - `settlement.reconciled`: the totals of one organization, settlement date and currency,
 *   when they are new or changed; keyed by the organization id.
 */
import { formatMinorUnits } from '../../money/money.js';
import type { SettlementEvent } from '../settlement-events.js';
import type { FindingRow } from './settlement-findings.repository.js';
import type { LineTotals } from './settlement-lines.repository.js';

export function settlementExceptionEvent(
  finding: FindingRow,
): SettlementEvent<'settlement.exception'> {
  const money = (minor: number): string => formatMinorUnits(minor, finding.currency);
  return {
    type: 'settlement.exception',
    organizationId: finding.organizationId,
    orderId: finding.orderId,
    paymentId: finding.payflowPaymentId,
    data: {
      findingId: finding.id,
      kind: finding.kind,
      subject: finding.subjectKey,
      installmentId: finding.installmentId,
      currency: finding.currency,
      expectedAmount: finding.expectedMinor === null ? null : money(finding.expectedMinor),
      settledAmount: money(finding.settledMinor),
      openedAt: finding.openedAt.toISOString(),
    },
  };
}

export function settlementReconciledEvent(
  totals: LineTotals,
): SettlementEvent<'settlement.reconciled'> {
  const money = (minor: number): string => formatMinorUnits(minor, totals.currency);
  return {
    type: 'settlement.reconciled',
    organizationId: totals.organizationId,
    orderId: null,
    paymentId: null,
    data: {
      settlementDate: totals.settlementDate,
      currency: totals.currency,
      grossAmount: money(totals.grossMinor),
      feeAmount: money(totals.feeMinor),
      netAmount: money(totals.netMinor),
      lines: totals.lines,
      linesMatched: totals.linesMatched,
      findings: totals.findings,
    },
  };
}
