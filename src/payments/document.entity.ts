import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

/** A document attached to a payment, mapping the ERP's documentRef to Payflow's id. */
@Entity({ name: 'documents' })
@Index('documents_payment_ref_key', ['paymentId', 'documentRef'], { unique: true })
export class DocumentEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'payment_id', type: 'uuid' })
  paymentId!: string;

  @Column({ name: 'document_ref', type: 'text' })
  documentRef!: string;

  @Column({ name: 'payflow_document_id', type: 'text', nullable: true })
  payflowDocumentId!: string | null;

  @Column({ name: 'file_name', type: 'text' })
  fileName!: string;

  @Column({ name: 'content_type', type: 'text' })
  contentType!: string;

  @Column({ type: 'int' })
  size!: number;

  @Column({ name: 'removed_at', type: 'timestamptz', nullable: true })
  removedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
