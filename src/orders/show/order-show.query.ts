/**
 * `order show`: reads an order and everything payflow-bridge knows about it, read-only,
 * into an OrderView. Columns are chosen one by one: secrets (api_key_hash, webhook_token)
 * and event payloads are never selected.
 */
import { Injectable } from '@nestjs/common';
import { currencyExponent } from '../../common/money.js';
import type { Sql } from '../../database/database.js';
import {
  sanitizeText,
  type AmountView,
  type DeadLetterView,
  type OrderView,
  type PaymentView,
} from './order-show.view.js';

type Timestamp = Date | string;

/** Minor units (decimal text, any size) as exact decimal text in major units. */
export function amountView(minor: string, currency: string): AmountView {
  const code = currency.trim();
  let exponent: number;
  try {
    exponent = currencyExponent(code);
  } catch {
    return { amount: `${minor} minor units`, currency: code };
  }
  const value = BigInt(minor);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = exponent > 0 ? `.${digits.slice(digits.length - exponent)}` : '';
  return { amount: `${negative ? '-' : ''}${whole}${fraction}`, currency: code };
}

function iso(value: Timestamp): string {
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

function isoOrNull(value: Timestamp | null): string | null {
  return value === null ? null : iso(value);
}

function textOrNull(value: string | null): string | null {
  return value === null ? null : sanitizeText(value);
}

@Injectable()
export class OrderShowQuery {
  /** The order's view, or null when no order and no dead letter has that id. */
  async show(sql: Sql, orderId: string): Promise<OrderView | null> {
    const [order] = await sql.query<{
      orderId: string;
      organizationId: string | null;
      orderNumber: string | null;
      state: string;
      currency: string | null;
      blockedAt: Timestamp | null;
      blockedReason: string | null;
      createdAt: Timestamp;
      updatedAt: Timestamp;
    }>(
      `SELECT order_id AS "orderId", organization_id AS "organizationId",
              order_number AS "orderNumber", state, currency, blocked_at AS "blockedAt",
              blocked_reason AS "blockedReason", created_at AS "createdAt", updated_at AS "updatedAt"
         FROM orders WHERE order_id = $1`,
      [orderId],
    );
    const deadLetters = await this.deadLetters(sql, orderId);
    if (order === undefined && deadLetters.length === 0) return null;

    return {
      order:
        order === undefined
          ? {
              // Known only from its dead letters (its first event never took effect).
              orderId,
              organizationId: null,
              orderNumber: null,
              state: 'unknown',
              currency: null,
              blocked: false,
              blockedAt: null,
              blockedReason: null,
              createdAt: null,
              updatedAt: null,
            }
          : {
              orderId: order.orderId,
              organizationId: order.organizationId,
              orderNumber: order.orderNumber,
              state: order.state,
              currency: order.currency?.trim() ?? null,
              blocked: order.blockedAt !== null || order.state === 'blocked',
              blockedAt: isoOrNull(order.blockedAt),
              blockedReason: textOrNull(order.blockedReason),
              createdAt: iso(order.createdAt),
              updatedAt: iso(order.updatedAt),
            },
      payments: await this.payments(sql, orderId),
      deadLetters,
    };
  }

  private async payments(sql: Sql, orderId: string): Promise<PaymentView[]> {
    const payments = await sql.query<{
      id: string;
      payflowId: string | null;
      organizationId: string | null;
      state: string;
      providerStatus: string | null;
      status: string | null;
      paymentLink: string | null;
      paymentMethodId: string | null;
      currency: string;
      totalGross: string;
      totalNet: string;
      createdAt: Timestamp;
      updatedAt: Timestamp;
      lastPolledAt: Timestamp | null;
    }>(
      `SELECT id, payflow_id AS "payflowId", organization_id AS "organizationId", state,
              provider_status AS "providerStatus", status, payment_link AS "paymentLink",
              payment_method_id AS "paymentMethodId", currency,
              total_gross_minor::text AS "totalGross", total_net_minor::text AS "totalNet",
              created_at AS "createdAt", updated_at AS "updatedAt", last_polled_at AS "lastPolledAt"
         FROM payments WHERE order_id = $1 ORDER BY created_at, id`,
      [orderId],
    );
    if (payments.length === 0) return [];
    const ids = payments.map((payment) => payment.id);

    const installments = await sql.query<{
      paymentId: string;
      position: number;
      installmentRef: string | null;
      payflowInstallmentId: string | null;
      type: string | null;
      dueDate: string;
      gross: string;
      providerStatus: string | null;
      removedAt: Timestamp | null;
    }>(
      `SELECT payment_id AS "paymentId", position, installment_ref AS "installmentRef",
              payflow_installment_id AS "payflowInstallmentId", type, due_date::text AS "dueDate",
              gross_minor::text AS gross, provider_status AS "providerStatus", removed_at AS "removedAt"
         FROM installments WHERE payment_id = ANY($1::uuid[]) ORDER BY position, created_at`,
      [ids],
    );
    const documents = await sql.query<{
      paymentId: string;
      documentRef: string;
      payflowDocumentId: string | null;
      fileName: string;
      contentType: string;
      size: number;
      createdAt: Timestamp;
      removedAt: Timestamp | null;
    }>(
      `SELECT payment_id AS "paymentId", document_ref AS "documentRef",
              payflow_document_id AS "payflowDocumentId", file_name AS "fileName",
              content_type AS "contentType", size, created_at AS "createdAt", removed_at AS "removedAt"
         FROM documents WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [ids],
    );
    const refunds = await sql.query<{
      paymentId: string;
      refundRef: string;
      payflowRefundId: string | null;
      refundType: string | null;
      currency: string;
      gross: string;
      net: string;
      remaining: string | null;
      createdAt: Timestamp;
    }>(
      `SELECT payment_id AS "paymentId", refund_ref AS "refundRef",
              payflow_refund_id AS "payflowRefundId", refund_type AS "refundType", currency,
              gross_minor::text AS gross, net_minor::text AS net,
              remaining_minor::text AS remaining, created_at AS "createdAt"
         FROM refunds WHERE payment_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [ids],
    );
    const history = await sql.query<{
      paymentId: string;
      recordedAt: Timestamp;
      source: string;
      previousProviderStatus: string | null;
      providerStatus: string | null;
      status: string | null;
    }>(
      `SELECT payment_id AS "paymentId", recorded_at AS "recordedAt", source,
              previous_provider_status AS "previousProviderStatus",
              provider_status AS "providerStatus", status
         FROM payment_status_history WHERE payment_id = ANY($1::uuid[]) ORDER BY id`,
      [ids],
    );

    const latestId = payments[payments.length - 1]?.id;
    return payments.map((payment) => {
      const currency = payment.currency.trim();
      return {
        id: payment.id,
        latest: payment.id === latestId,
        payflowId: payment.payflowId,
        organizationId: payment.organizationId,
        state: payment.state,
        providerStatus: payment.providerStatus,
        status: payment.status,
        paymentLink: textOrNull(payment.paymentLink),
        paymentMethodId: payment.paymentMethodId,
        totalGross: amountView(payment.totalGross, currency),
        totalNet: amountView(payment.totalNet, currency),
        createdAt: iso(payment.createdAt),
        updatedAt: iso(payment.updatedAt),
        lastPolledAt: isoOrNull(payment.lastPolledAt),
        installments: installments
          .filter((row) => row.paymentId === payment.id)
          .map((row) => ({
            position: row.position,
            installmentRef: row.installmentRef,
            payflowInstallmentId: row.payflowInstallmentId,
            type: row.type,
            dueDate: row.dueDate,
            gross: amountView(row.gross, currency),
            providerStatus: row.providerStatus,
            removedAt: isoOrNull(row.removedAt),
          })),
        documents: documents
          .filter((row) => row.paymentId === payment.id)
          .map((row) => ({
            documentRef: row.documentRef,
            payflowDocumentId: row.payflowDocumentId,
            fileName: sanitizeText(row.fileName),
            contentType: row.contentType,
            size: row.size,
            createdAt: iso(row.createdAt),
            removedAt: isoOrNull(row.removedAt),
          })),
        refunds: refunds
          .filter((row) => row.paymentId === payment.id)
          .map((row) => ({
            refundRef: row.refundRef,
            payflowRefundId: row.payflowRefundId,
            refundType: row.refundType,
            gross: amountView(row.gross, row.currency),
            net: amountView(row.net, row.currency),
            remaining: row.remaining === null ? null : amountView(row.remaining, row.currency),
            createdAt: iso(row.createdAt),
          })),
        statusHistory: history
          .filter((row) => row.paymentId === payment.id)
          .map((row) => ({
            recordedAt: iso(row.recordedAt),
            source: row.source,
            previousProviderStatus: row.previousProviderStatus,
            providerStatus: row.providerStatus,
            status: row.status,
          })),
      };
    });
  }

  private async deadLetters(sql: Sql, orderId: string): Promise<DeadLetterView[]> {
    const rows = await sql.query<{
      id: string;
      eventId: string | null;
      eventType: string | null;
      reason: string;
      error: string;
      attempts: number;
      topic: string;
      partition: number;
      offset: string;
      failedAt: Timestamp;
      replayedAt: Timestamp | null;
    }>(
      `SELECT id::text AS id, event_id AS "eventId", event_type AS "eventType", reason, error,
              attempts, topic, partition, "offset"::text AS "offset", failed_at AS "failedAt",
              replayed_at AS "replayedAt"
         FROM dead_letters d WHERE d.order_id = $1 ORDER BY d.id`,
      [orderId],
    );
    return rows.map((row) => ({
      id: row.id,
      eventId: row.eventId,
      eventType: row.eventType,
      reason: row.reason,
      error: sanitizeText(row.error),
      attempts: row.attempts,
      origin: `${row.topic}/${row.partition}@${row.offset}`,
      failedAt: iso(row.failedAt),
      replayed: row.replayedAt !== null,
      replayedAt: isoOrNull(row.replayedAt),
    }));
  }
}
