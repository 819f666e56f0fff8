/**
 * The reconciliation's tables (migrations/1764126000000-SettlementReconciliation.ts): the
 * good lines of every stored file version, the findings, and the totals last published.
 */
import { Entity, Index } from 'typeorm';
import { col } from '../../database/columns.js';

/** One good row of a stored settlement file version, money in integer minor units. */
@Entity({ name: 'settlement_lines' })
@Index('settlement_lines_file_payment_idx', ['fileId', 'payflowPaymentId'])
@Index('settlement_lines_payment_idx', ['payflowPaymentId'])
export class SettlementLineEntity {
  @col.key.uuid('file_id') fileId!: string;
  /** 1-based line of the file where the row starts (the header is line 1). */
  @col.key.int('line_number') lineNumber!: number;
  @col.text('organization_id') organizationId!: string;
  @col.date('settlement_date') settlementDate!: string;
  @col.text('payflow_payment_id', { nullable: true }) payflowPaymentId!: string | null;
  @col.text('installment_id', { nullable: true }) installmentId!: string | null;
  @col.text('transaction_type') transactionType!: string;
  @col.currency() currency!: string;
  @col.minorUnits('gross_minor') grossMinor!: number;
  @col.minorUnits('fee_minor') feeMinor!: number;
  @col.minorUnits('net_minor') netMinor!: number;
  @col.timestamp('booked_at') bookedAt!: Date;
  @col.text('internal_ref', { nullable: true }) internalRef!: string | null;
  @col.text('order_number', { nullable: true }) orderNumber!: string | null;
  /** What the last reconciliation made of it (LineMatch), null before the first. */
  @col.text('match', { nullable: true }) match!: string | null;
  @col.text('finding_kind', { nullable: true }) findingKind!: string | null;
  @col.text('subject_key', { nullable: true }) subjectKey!: string | null;
}

/** One finding of a reconciliation (CONTRACT §10 kinds), open until settled or acknowledged. */
@Entity({ name: 'settlement_findings' })
@Index('settlement_findings_open_key', ['kind', 'subjectKey'], {
  unique: true,
  where: `"closed_at" IS NULL`,
})
@Index('settlement_findings_payment_idx', ['payflowPaymentId'])
@Index('settlement_findings_subject_idx', ['kind', 'subjectKey', 'id'])
export class SettlementFindingEntity {
  @col.bigintId() id!: string;
  @col.text() kind!: string;
  /** `payment:<Payflow id>` or `installment:<Payflow installment id>`. */
  @col.text('subject_key') subjectKey!: string;
  @col.text('organization_id') organizationId!: string;
  @col.text('payflow_payment_id') payflowPaymentId!: string;
  @col.text('order_id', { nullable: true }) orderId!: string | null;
  @col.text('installment_id', { nullable: true }) installmentId!: string | null;
  @col.currency() currency!: string;
  @col.minorUnits('expected_minor', { nullable: true }) expectedMinor!: number | null;
  @col.minorUnits('settled_minor') settledMinor!: number;
  @col.now('opened_at') openedAt!: Date;
  @col.timestamp('closed_at', { nullable: true }) closedAt!: Date | null;
  /** settled or acknowledged. */
  @col.text('closed_how', { nullable: true }) closedHow!: string | null;
  @col.text('closed_reason', { nullable: true }) closedReason!: string | null;
  @col.text('closed_by', { nullable: true }) closedBy!: string | null;
}

/** The totals last published per organization, settlement date and currency. */
@Entity({ name: 'settlement_totals' })
export class SettlementTotalEntity {
  @col.key.text('organization_id') organizationId!: string;
  @col.key.date('settlement_date') settlementDate!: string;
  @col.key.text() currency!: string;
  @col.minorUnits('gross_minor') grossMinor!: number;
  @col.minorUnits('fee_minor') feeMinor!: number;
  @col.minorUnits('net_minor') netMinor!: number;
  @col.int() lines!: number;
  @col.int('lines_matched') linesMatched!: number;
  @col.int() findings!: number;
  @col.now('published_at') publishedAt!: Date;
}

export const RECONCILIATION_ENTITIES = [
  SettlementLineEntity,
  SettlementFindingEntity,
  SettlementTotalEntity,
];
