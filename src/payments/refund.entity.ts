import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { minorUnitsTransformer } from '../database/minor-units.transformer.js';

/** A refund of a payment, mapping the ERP's refundId to Payflow's. */
@Entity({ name: 'refunds' })
@Index('refunds_payment_ref_key', ['paymentId', 'refundRef'], { unique: true })
export class RefundEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'payment_id', type: 'uuid' })
  paymentId!: string;

  @Column({ name: 'refund_ref', type: 'text' })
  refundRef!: string;

  @Column({ name: 'payflow_refund_id', type: 'text', nullable: true })
  payflowRefundId!: string | null;

  @Column({ type: 'char', length: 3 })
  currency!: string;

  @Column({ name: 'gross_minor', type: 'bigint', transformer: minorUnitsTransformer })
  grossMinor!: number;

  @Column({ name: 'net_minor', type: 'bigint', transformer: minorUnitsTransformer })
  netMinor!: number;

  @Column({ name: 'refund_type', type: 'text', nullable: true })
  refundType!: string | null;

  @Column({
    name: 'remaining_minor',
    type: 'bigint',
    nullable: true,
    transformer: minorUnitsTransformer,
  })
  remainingMinor!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
