import { Column, Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/** One installment of a payment, mapping the ERP's installmentRef to Payflow's id. */
@Entity({ name: 'installments' })
@Index('installments_payment_ref_key', ['paymentId', 'installmentRef'], { unique: true })
export class InstallmentEntity {
  @col.uuidId() id!: string;
  @col.uuid('payment_id') paymentId!: string;
  @col.text('installment_ref', { nullable: true }) installmentRef!: string | null;

  @Index('installments_payflow_id_key', { unique: true })
  @col.text('payflow_installment_id', { nullable: true })
  payflowInstallmentId!: string | null;

  @col.int() position!: number;

  @Column({ name: 'due_date', type: 'date' })
  dueDate!: string;

  @col.minorUnits('gross_minor') grossMinor!: number;
  @col.text('type', { nullable: true }) type!: string | null;
  @col.text('provider_status', { nullable: true }) providerStatus!: string | null;
  @col.timestamp('removed_at', { nullable: true }) removedAt!: Date | null;
  @col.createdAt() createdAt!: Date;
  @col.updatedAt() updatedAt!: Date;
}
