import { Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/** A document attached to a payment, mapping the ERP's documentRef to Payflow's id. */
@Entity({ name: 'documents' })
@Index('documents_payment_ref_key', ['paymentId', 'documentRef'], { unique: true })
export class DocumentEntity {
  @col.uuidId() id!: string;
  @col.uuid('payment_id') paymentId!: string;
  @col.text('document_ref') documentRef!: string;
  @col.text('payflow_document_id', { nullable: true }) payflowDocumentId!: string | null;
  @col.text('file_name') fileName!: string;
  @col.text('content_type') contentType!: string;
  @col.int() size!: number;
  @col.timestamp('removed_at', { nullable: true }) removedAt!: Date | null;
  @col.createdAt() createdAt!: Date;
  @col.updatedAt() updatedAt!: Date;
}
