/**
 * An order's settlement, for its page and timeline: the current settlement lines of its
 * Payflow payments (each with what the reconciliation made of it) and the findings about
 * them, open or closed. Read by the payments' Payflow ids (settlement_lines_payment_idx,
 * settlement_findings_payment_idx); no SQL here, the reconciliation's repositories hold it.
 * Each finding is also an entry of the timeline: when it was opened, and how it was closed.
 */
import type { Sql } from '../../database/database.js';
import { SettlementFindingsRepository } from '../../settlements/reconcile/settlement-findings.repository.js';
import { SettlementLinesRepository } from '../../settlements/reconcile/settlement-lines.repository.js';
import {
  findingView,
  settlementLineView,
  type FindingView,
} from '../reconciliation/reconciliation.view.js';
import type {
  OrderSettlement,
  TimelineEntry,
  TimelineFact,
  TimelineTone,
} from './order-timeline.view.js';

const lines = new SettlementLinesRepository();
const findings = new SettlementFindingsRepository();

/** The settlement lines and findings of these Payflow payments. */
export async function readOrderSettlement(
  sql: Sql,
  payflowIds: readonly string[],
): Promise<OrderSettlement> {
  const [lineRows, findingRows] = await Promise.all([
    lines.currentWithMatchOf(sql, payflowIds),
    findings.ofPayments(sql, payflowIds),
  ]);
  return { lines: lineRows.map(settlementLineView), findings: findingRows.map(findingView) };
}

function facts(pairs: readonly (readonly [string, string | null])[]): TimelineFact[] {
  return pairs.flatMap(([label, value]) =>
    value === null || value === '' ? [] : [{ label, value }],
  );
}

/** A finding on the timeline, when it was opened; its state now as the outcome. */
export function findingEntry(finding: FindingView): TimelineEntry {
  const tone: TimelineTone = finding.open ? 'bad' : finding.closedHow === 'settled' ? 'ok' : 'info';
  const amount = (value: FindingView['settled'] | null): string | null =>
    value === null ? null : `${value.amount} ${value.currency}`;
  return {
    at: finding.openedAt,
    kind: 'settlement_finding',
    title: `Settlement finding ${finding.kind.replaceAll('_', ' ')} for payment ${finding.payflowPaymentId}`,
    outcome: finding.open ? 'open' : (finding.closedHow ?? 'closed'),
    tone,
    facts: facts([
      ['Finding', finding.id],
      ['Installment', finding.installmentId],
      ['Expected', amount(finding.expected)],
      ['Settled', amount(finding.settled)],
      ['Closed', finding.closedAt],
      ['Why', finding.closedReason],
      ['By', finding.closedBy],
    ]),
    traceId: null,
  };
}
