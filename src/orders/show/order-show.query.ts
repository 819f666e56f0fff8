/**
 * `order show`: reads an order and everything payflow-bridge knows about it, read-only,
 * into an OrderView. Columns are chosen one by one: secrets (api_key_hash, webhook_token)
 * and event payloads are never selected.
 */
import { Injectable } from '@nestjs/common';
import { currencyExponent } from '../../common/money.js';
import type { Sql } from '../../database/database.js';
import { OrderShowRepository } from './order-show.repository.js';
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
  constructor(private readonly rows: OrderShowRepository = new OrderShowRepository()) {}

  /** The order's view, or null when no order and no dead letter has that id. */
  async show(sql: Sql, orderId: string): Promise<OrderView | null> {
    const order = await this.rows.order(sql, orderId);
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
      inDoubtVerdicts: (await this.rows.verdicts(sql, orderId)).map((row) => ({
        id: row.id,
        eventId: row.eventId,
        eventType: row.command,
        verdict: row.verdict,
        payflowId: row.payflowId,
        decidedBy: sanitizeText(row.decidedBy),
        decidedAt: iso(row.decidedAt),
        replayedAt: isoOrNull(row.replayedAt),
        replayedLetters: row.replayedLetters,
      })),
    };
  }

  private async payments(sql: Sql, orderId: string): Promise<PaymentView[]> {
    const payments = await this.rows.payments(sql, orderId);
    if (payments.length === 0) return [];
    const ids = payments.map((payment) => payment.id);

    const installments = await this.rows.installments(sql, ids);
    const documents = await this.rows.documents(sql, ids);
    const refunds = await this.rows.refunds(sql, ids);
    const history = await this.rows.history(sql, ids);
    const webhooks = await this.rows.webhooks(sql, ids);

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
        webhooks: webhooks
          .filter((row) => row.paymentId === payment.id)
          .map((row) => ({
            id: row.id,
            kind: row.kind,
            receivedAt: iso(row.receivedAt),
            lastReceivedAt: iso(row.lastReceivedAt),
            duplicates: row.duplicates,
            attempts: row.attempts,
            processed: row.processedAt !== null,
            processedAt: isoOrNull(row.processedAt),
            error: textOrNull(row.lastError),
          })),
      };
    });
  }

  private async deadLetters(sql: Sql, orderId: string): Promise<DeadLetterView[]> {
    const rows = await this.rows.deadLetters(sql, orderId);
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
