/** The only owner of the `documents` table's SQL: documents attached to payments at Payflow. */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';

/** A live (not removed) document of a payment. */
export interface LiveDocument {
  /** documents.id */
  readonly id: string;
  readonly payflowDocumentId: string | null;
}

export interface AttachedDocument {
  readonly paymentId: string;
  readonly ref: string;
  readonly payflowDocumentId: string;
  readonly fileName: string;
  readonly contentType: string;
  readonly size: number;
}

const liveRow = z.object({
  id: z.string(),
  payflowDocumentId: z.string().nullable(),
}) satisfies z.ZodType<LiveDocument>;

const overviewRow = z.object({
  paymentId: z.string(),
  documentRef: z.string(),
  payflowDocumentId: z.string().nullable(),
  fileName: z.string(),
  contentType: z.string(),
  size: z.number(),
  createdAt: timestampField,
  removedAt: timestampField.nullable(),
});

/** A document (attached or removed) as the operator's reads show it. */
export type DocumentOverview = z.infer<typeof overviewRow>;

const personalDataRow = z.object({
  id: z.string(),
  paymentId: z.string(),
  documentRef: z.string(),
  fileName: z.string(),
});

/** The personal data a document's row holds (privacy export and erasure): its file name. */
export type DocumentPersonalData = z.infer<typeof personalDataRow>;

@Injectable()
export class DocumentRepository {
  /** The live document `ref` of a payment, or null. */
  async findLive(sql: Sql, paymentId: string, ref: string): Promise<LiveDocument | null> {
    const [row] = await queryRows(
      sql,
      liveRow,
      `SELECT id::text, payflow_document_id AS "payflowDocumentId" FROM documents
        WHERE payment_id = $1::uuid AND document_ref = $2 AND removed_at IS NULL`,
      [paymentId, ref],
    );
    return row ?? null;
  }

  /** Every document of the payments, oldest first. */
  listForPayments(sql: Sql, paymentIds: readonly string[]): Promise<DocumentOverview[]> {
    return queryRows(
      sql,
      overviewRow,
      `SELECT payment_id::text AS "paymentId", document_ref AS "documentRef",
              payflow_document_id AS "payflowDocumentId", file_name AS "fileName",
              content_type AS "contentType", size, created_at AS "createdAt", removed_at AS "removedAt"
         FROM documents WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [paymentIds],
    );
  }

  /** Stores an attached document (a removed one with the same reference comes back). */
  async attach(tx: Sql, document: AttachedDocument): Promise<void> {
    await tx.execute(
      `INSERT INTO documents (payment_id, document_ref, payflow_document_id, file_name,
                              content_type, size)
       VALUES ($1::uuid, $2, $3, $4, $5, $6)
       ON CONFLICT (payment_id, document_ref) DO UPDATE
          SET payflow_document_id = EXCLUDED.payflow_document_id,
              file_name = EXCLUDED.file_name, content_type = EXCLUDED.content_type,
              size = EXCLUDED.size, removed_at = NULL, updated_at = now()`,
      [
        document.paymentId,
        document.ref,
        document.payflowDocumentId,
        document.fileName,
        document.contentType,
        document.size,
      ],
    );
  }

  async markRemoved(tx: Sql, id: string): Promise<void> {
    await tx.execute(
      `UPDATE documents SET removed_at = now(), updated_at = now() WHERE id = $1::uuid`,
      [id],
    );
  }

  /** The documents of the order's payments (removed ones too), oldest first. */
  personalDataOf(sql: Sql, orderId: string): Promise<DocumentPersonalData[]> {
    return queryRows(
      sql,
      personalDataRow,
      `SELECT d.id::text AS id, d.payment_id::text AS "paymentId", d.document_ref AS "documentRef",
              d.file_name AS "fileName"
         FROM documents d JOIN payments p ON p.id = d.payment_id
        WHERE p.order_id = $1 ORDER BY d.created_at, d.id`,
      [orderId],
    );
  }

  /**
   * Replaces the file names of the order's documents with `erased` (the privacy marker);
   * the number replaced (0 once they all hold it).
   */
  eraseFileNames(tx: Sql, orderId: string, erased: string): Promise<number> {
    return tx.execute(
      `UPDATE documents d SET file_name = $2
         FROM payments p
        WHERE p.id = d.payment_id AND p.order_id = $1 AND d.file_name <> $2`,
      [orderId, erased],
    );
  }
}
