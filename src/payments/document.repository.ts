/** The only owner of the `documents` table's SQL: documents attached to payments at Payflow. */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';

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

const liveRow = z
  .object({ id: z.string(), payflow_document_id: z.string().nullable() })
  .transform((row): LiveDocument => ({ id: row.id, payflowDocumentId: row.payflow_document_id }));

@Injectable()
export class DocumentRepository {
  /** The live document `ref` of a payment, or null. */
  async findLive(sql: Sql, paymentId: string, ref: string): Promise<LiveDocument | null> {
    const [row] = await sql.query(
      `SELECT id::text, payflow_document_id FROM documents
        WHERE payment_id = $1::uuid AND document_ref = $2 AND removed_at IS NULL`,
      [paymentId, ref],
    );
    return row === undefined ? null : liveRow.parse(row);
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
}
