/**
 * The reads of `order show`: an order and everything payflow-bridge knows about it,
 * read-only, rows parsed (zod). Columns are chosen one by one: secrets (api_key_hash,
 * webhook_token), event payloads and webhook bodies and headers are never selected. A read model over the order's
 * tables, kept apart from their repositories because it serves the operator only.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';

const timestamp = z.union([z.date(), z.string()]);

const orderRow = z.object({
  orderId: z.string(),
  organizationId: z.string().nullable(),
  orderNumber: z.string().nullable(),
  state: z.string(),
  currency: z.string().nullable(),
  blockedAt: timestamp.nullable(),
  blockedReason: z.string().nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

const paymentsRow = z.object({
  id: z.string(),
  payflowId: z.string().nullable(),
  organizationId: z.string().nullable(),
  state: z.string(),
  providerStatus: z.string().nullable(),
  status: z.string().nullable(),
  paymentLink: z.string().nullable(),
  paymentMethodId: z.string().nullable(),
  currency: z.string(),
  totalGross: z.string(),
  totalNet: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
  lastPolledAt: timestamp.nullable(),
});

const installmentsRow = z.object({
  paymentId: z.string(),
  position: z.number(),
  installmentRef: z.string().nullable(),
  payflowInstallmentId: z.string().nullable(),
  type: z.string().nullable(),
  dueDate: z.string(),
  gross: z.string(),
  providerStatus: z.string().nullable(),
  removedAt: timestamp.nullable(),
});

const documentsRow = z.object({
  paymentId: z.string(),
  documentRef: z.string(),
  payflowDocumentId: z.string().nullable(),
  fileName: z.string(),
  contentType: z.string(),
  size: z.number(),
  createdAt: timestamp,
  removedAt: timestamp.nullable(),
});

const refundsRow = z.object({
  paymentId: z.string(),
  refundRef: z.string(),
  payflowRefundId: z.string().nullable(),
  refundType: z.string().nullable(),
  currency: z.string(),
  gross: z.string(),
  net: z.string(),
  remaining: z.string().nullable(),
  createdAt: timestamp,
});

const historyRow = z.object({
  paymentId: z.string(),
  recordedAt: timestamp,
  source: z.string(),
  previousProviderStatus: z.string().nullable(),
  providerStatus: z.string().nullable(),
  status: z.string().nullable(),
});

const webhooksRow = z.object({
  paymentId: z.string(),
  id: z.string(),
  kind: z.string(),
  receivedAt: timestamp,
  lastReceivedAt: timestamp,
  duplicates: z.number(),
  attempts: z.number(),
  processedAt: timestamp.nullable(),
  lastError: z.string().nullable(),
});

const verdictsRow = z.object({
  id: z.string(),
  eventId: z.string(),
  command: z.string(),
  verdict: z.string(),
  payflowId: z.string().nullable(),
  decidedBy: z.string(),
  decidedAt: timestamp,
  replayedAt: timestamp.nullable(),
  replayedLetters: z.number().nullable(),
});

const deadLettersRow = z.object({
  id: z.string(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  reason: z.string(),
  error: z.string(),
  attempts: z.number(),
  topic: z.string(),
  partition: z.number(),
  offset: z.string(),
  failedAt: timestamp,
  replayedAt: timestamp.nullable(),
});

@Injectable()
export class OrderShowRepository {
  async order(sql: Sql, orderId: string): Promise<z.infer<typeof orderRow> | undefined> {
    const [row] = await sql.query(
      `SELECT order_id AS "orderId", organization_id AS "organizationId",
              order_number AS "orderNumber", state, currency, blocked_at AS "blockedAt",
              blocked_reason AS "blockedReason", created_at AS "createdAt", updated_at AS "updatedAt"
         FROM orders WHERE order_id = $1`,
      [orderId],
    );
    return row === undefined ? undefined : orderRow.parse(row);
  }

  payments(sql: Sql, orderId: string): Promise<z.infer<typeof paymentsRow>[]> {
    return queryRows(
      sql,
      paymentsRow,
      `SELECT id, payflow_id AS "payflowId", organization_id AS "organizationId", state,
              provider_status AS "providerStatus", status, payment_link AS "paymentLink",
              payment_method_id AS "paymentMethodId", currency,
              total_gross_minor::text AS "totalGross", total_net_minor::text AS "totalNet",
              created_at AS "createdAt", updated_at AS "updatedAt", last_polled_at AS "lastPolledAt"
         FROM payments WHERE order_id = $1 ORDER BY created_at, id`,
      [orderId],
    );
  }

  installments(
    sql: Sql,
    paymentIds: readonly string[],
  ): Promise<z.infer<typeof installmentsRow>[]> {
    return queryRows(
      sql,
      installmentsRow,
      `SELECT payment_id AS "paymentId", position, installment_ref AS "installmentRef",
              payflow_installment_id AS "payflowInstallmentId", type, due_date::text AS "dueDate",
              gross_minor::text AS gross, provider_status AS "providerStatus", removed_at AS "removedAt"
         FROM installments WHERE payment_id = ANY($1::uuid[]) ORDER BY position, created_at`,
      [paymentIds],
    );
  }

  documents(sql: Sql, paymentIds: readonly string[]): Promise<z.infer<typeof documentsRow>[]> {
    return queryRows(
      sql,
      documentsRow,
      `SELECT payment_id AS "paymentId", document_ref AS "documentRef",
              payflow_document_id AS "payflowDocumentId", file_name AS "fileName",
              content_type AS "contentType", size, created_at AS "createdAt", removed_at AS "removedAt"
         FROM documents WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [paymentIds],
    );
  }

  refunds(sql: Sql, paymentIds: readonly string[]): Promise<z.infer<typeof refundsRow>[]> {
    return queryRows(
      sql,
      refundsRow,
      `SELECT payment_id AS "paymentId", refund_ref AS "refundRef",
              payflow_refund_id AS "payflowRefundId", refund_type AS "refundType", currency,
              gross_minor::text AS gross, net_minor::text AS net,
              remaining_minor::text AS remaining, created_at AS "createdAt"
         FROM refunds WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [paymentIds],
    );
  }

  history(sql: Sql, paymentIds: readonly string[]): Promise<z.infer<typeof historyRow>[]> {
    return queryRows(
      sql,
      historyRow,
      `SELECT payment_id AS "paymentId", recorded_at AS "recordedAt", source,
              previous_provider_status AS "previousProviderStatus",
              provider_status AS "providerStatus", status
         FROM payment_status_history WHERE payment_id = ANY($1::uuid[]) ORDER BY id`,
      [paymentIds],
    );
  }

  deadLetters(sql: Sql, orderId: string): Promise<z.infer<typeof deadLettersRow>[]> {
    return queryRows(
      sql,
      deadLettersRow,
      `SELECT id::text AS id, event_id AS "eventId", event_type AS "eventType", reason, error,
              attempts, topic, partition, "offset"::text AS "offset", failed_at AS "failedAt",
              replayed_at AS "replayedAt"
         FROM dead_letters d WHERE d.order_id = $1 ORDER BY d.id`,
      [orderId],
    );
  }

  /** The payments' webhook inbox rows: when, which kind, processed or not (never the body). */
  webhooks(sql: Sql, paymentIds: readonly string[]): Promise<z.infer<typeof webhooksRow>[]> {
    return queryRows(
      sql,
      webhooksRow,
      `SELECT payment_id::text AS "paymentId", id::text AS id, kind, received_at AS "receivedAt",
              last_received_at AS "lastReceivedAt", duplicates, attempts,
              processed_at AS "processedAt", last_error AS "lastError"
         FROM webhook_inbox WHERE payment_id = ANY($1::uuid[]) ORDER BY received_at, id`,
      [paymentIds],
    );
  }

  /** The verdicts of `in-doubt resolve` on the order's calls. */
  verdicts(sql: Sql, orderId: string): Promise<z.infer<typeof verdictsRow>[]> {
    return queryRows(
      sql,
      verdictsRow,
      `SELECT id::text AS id, event_id::text AS "eventId", command, verdict,
              payflow_id AS "payflowId", decided_by AS "decidedBy", decided_at AS "decidedAt",
              replayed_at AS "replayedAt", replayed_letters AS "replayedLetters"
         FROM in_doubt_verdicts WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
  }
}
