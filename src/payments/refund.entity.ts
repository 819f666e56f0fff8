import { Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/** A refund of a payment, mapping the ERP's refundId to Payflow's. */
@Entity({ name: 'refunds' })
@Index('refunds_payment_ref_key', ['paymentId', 'refundRef'], { unique: true })
export class RefundEntity {
  @col.uuidId() id!: string;
  @col.uuid('payment_id') paymentId!: string;
  @col.text('refund_ref') refundRef!: string;
  @col.text('payflow_refund_id', { nullable: true }) payflowRefundId!: string | null;
  @col.currency() currency!: string;
  @col.minorUnits('gross_minor') grossMinor!: number;
  @col.minorUnits('net_minor') netMinor!: number;
  @col.text('refund_type', { nullable: true }) refundType!: string | null;
  @col.minorUnits('remaining_minor', { nullable: true }) remainingMinor!: number | null;
  @col.createdAt() createdAt!: Date;
}
