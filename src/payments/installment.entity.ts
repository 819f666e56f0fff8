import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { minorUnitsTransformer } from '../database/minor-units.transformer.js';

/** One installment of a payment, mapping the ERP's installmentRef to Payflow's id. */
@Entity({ name: 'installments' })
@Index('installments_payment_ref_key', ['paymentId', 'installmentRef'], { unique: true })
export class InstallmentEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'payment_id', type: 'uuid' })
  paymentId!: string;

  @Column({ name: 'installment_ref', type: 'text', nullable: true })
  installmentRef!: string | null;

  @Index('installments_payflow_id_key', { unique: true })
  @Column({ name: 'payflow_installment_id', type: 'text', nullable: true })
  payflowInstallmentId!: string | null;

  @Column({ type: 'int' })
  position!: number;

  @Column({ name: 'due_date', type: 'date' })
  dueDate!: string;

  @Column({ name: 'gross_minor', type: 'bigint', transformer: minorUnitsTransformer })
  grossMinor!: number;

  @Column({ type: 'text', nullable: true })
  type!: string | null;

  @Column({ name: 'provider_status', type: 'text', nullable: true })
  providerStatus!: string | null;

  @Column({ name: 'removed_at', type: 'timestamptz', nullable: true })
  removedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
