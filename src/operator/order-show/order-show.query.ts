/**
 * `order show`: reads an order and everything payflow-bridge knows about it, read-only,
 * into an OrderView. A read model serving the operator: it holds no SQL, it composes the
 * reads of the tables' repositories, whose columns are chosen one by one (secrets such as
 * api_key_hash and webhook_token, event payloads and webhook bodies are never selected).
 */
import { formatMinorUnits } from '../../money/money.js';
import type { Sql } from '../../database/database.js';
import { DeadLetterRepository } from '../../dead-letters/dead-letter.repository.js';
import { deadLetterView } from '../dead-letters/dead-letter.view.js';
import { DocumentRepository, type DocumentOverview } from '../../payments/document.repository.js';
import {
  InstallmentRepository,
  type InstallmentOverview,
} from '../../payments/installment.repository.js';
import {
  PaymentStatusHistoryRepository,
  type RecordedStatusChange,
} from '../../payments/payment-status-history.repository.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { RefundRepository, type RefundOverview } from '../../payments/refund.repository.js';
import {
  UnexplainedEffectRepository,
  type StoredUnexplainedEffect,
} from '../../payments/unexplained-effects/unexplained-effect.repository.js';
import {
  WebhookInboxRepository,
  type ReceivedWebhook,
} from '../../webhooks/inbox/webhook-inbox.repository.js';
import {
  CommandAttemptRepository,
  type ClosedAttempt,
} from '../../orders/engine/attempts/command-attempt.repository.js';
import {
  InDoubtVerdictRepository,
  type VerdictRow,
} from '../../orders/in-doubt/in-doubt-verdict.repository.js';
import { OrderRepository, type OrderRow } from '../../orders/order.repository.js';
import {
  type AmountView,
  type DocumentView,
  type InDoubtVerdictView,
  type InstallmentView,
  type OrderSummaryView,
  type OrderView,
  type PaymentView,
  type ProbeDecisionView,
  type RefundView,
  type StatusChangeView,
  type WebhookView,
} from './order-show.view.js';
import { sanitizeText } from '../masking/sanitize-text.js';
import type { UnexplainedEffectView } from './unexplained-effect.view.js';

/**
 * Minor units (decimal text, as the tables hold them) as exact decimal text in major units,
 * by the one money formatter (src/money/money.ts). An amount it cannot format (an unknown
 * currency, text that is not an integer) is shown as its minor units.
 */
export function amountView(minor: string, currency: string): AmountView {
  const code = currency.trim();
  try {
    return { amount: formatMinorUnits(BigInt(minor), code), currency: code };
  } catch {
    return { amount: `${minor} minor units`, currency: code };
  }
}

function isoOrNull(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

function textOrNull(value: string | null): string | null {
  return value === null ? null : sanitizeText(value);
}

/** Reads rows of several payments at once, and hands each payment its own. */
class PaymentRows<T extends { readonly paymentId: string }> {
  private readonly byPayment = new Map<string, T[]>();

  constructor(rows: readonly T[]) {
    for (const row of rows) {
      const rowsOfPayment = this.byPayment.get(row.paymentId);
      if (rowsOfPayment === undefined) this.byPayment.set(row.paymentId, [row]);
      else rowsOfPayment.push(row);
    }
  }

  of<V>(paymentId: string, view: (row: T) => V): V[] {
    return (this.byPayment.get(paymentId) ?? []).map(view);
  }
}

function installmentView(row: InstallmentOverview, currency: string): InstallmentView {
  return {
    position: row.position,
    installmentRef: row.installmentRef,
    payflowInstallmentId: row.payflowInstallmentId,
    type: row.type,
    dueDate: row.dueDate,
    gross: amountView(row.gross, currency),
    providerStatus: row.providerStatus,
    removedAt: isoOrNull(row.removedAt),
  };
}

function documentView(row: DocumentOverview): DocumentView {
  return {
    documentRef: row.documentRef,
    payflowDocumentId: row.payflowDocumentId,
    fileName: sanitizeText(row.fileName),
    contentType: row.contentType,
    size: row.size,
    createdAt: row.createdAt.toISOString(),
    removedAt: isoOrNull(row.removedAt),
  };
}

/**
 * The order's recorded effects that no event explained, by payment. One the bridge recorded
 * after all (an installment or document of the payment with its Payflow id) names that row
 * in `explainedBy`, so that it is not shown as unexplained; the finding itself is kept.
 */
export function unexplainedEffectViews(
  rows: readonly StoredUnexplainedEffect[],
  installments: readonly InstallmentOverview[],
  documents: readonly DocumentOverview[],
): Map<string, UnexplainedEffectView[]> {
  const byPayment = new Map<string, UnexplainedEffectView[]>();
  for (const row of rows) {
    const installment = installments.find(
      (entry) => entry.paymentId === row.paymentId && entry.payflowInstallmentId === row.payflowId,
    );
    const document = documents.find(
      (entry) => entry.paymentId === row.paymentId && entry.payflowDocumentId === row.payflowId,
    );
    const explainedBy =
      row.kind === 'installment'
        ? installment === undefined
          ? null
          : `installment ${installment.installmentRef ?? `#${installment.position}`}`
        : document === undefined
          ? null
          : `document ${document.documentRef}`;
    const views = byPayment.get(row.paymentId) ?? [];
    views.push({
      kind: row.kind,
      payflowId: row.payflowId,
      gross:
        row.grossMinor === null || row.currency === null
          ? null
          : amountView(row.grossMinor.toString(), row.currency),
      dueDate: row.dueDate,
      providerStatus: row.providerStatus,
      fileName: textOrNull(row.fileName),
      firstSeenAt: row.firstSeenAt.toISOString(),
      firstSeenBy: row.firstSeenBy,
      lastSeenAt: row.lastSeenAt.toISOString(),
      explainedBy,
    });
    byPayment.set(row.paymentId, views);
  }
  return byPayment;
}

function refundView(row: RefundOverview): RefundView {
  return {
    refundRef: row.refundRef,
    payflowRefundId: row.payflowRefundId,
    refundType: row.refundType,
    gross: amountView(row.gross, row.currency),
    net: amountView(row.net, row.currency),
    remaining: row.remaining === null ? null : amountView(row.remaining, row.currency),
    createdAt: row.createdAt.toISOString(),
  };
}

function statusChangeView(row: RecordedStatusChange): StatusChangeView {
  return {
    recordedAt: row.recordedAt.toISOString(),
    source: row.source,
    previousProviderStatus: row.previousProviderStatus,
    providerStatus: row.providerStatus,
    status: row.status,
  };
}

function webhookView(row: ReceivedWebhook): WebhookView {
  return {
    id: row.id,
    kind: row.kind,
    receivedAt: row.receivedAt.toISOString(),
    lastReceivedAt: row.lastReceivedAt.toISOString(),
    duplicates: row.duplicates,
    attempts: row.attempts,
    processed: row.processedAt !== null,
    processedAt: isoOrNull(row.processedAt),
    error: textOrNull(row.lastError),
  };
}

function verdictView(row: VerdictRow): InDoubtVerdictView {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.command,
    verdict: row.verdict,
    payflowId: row.payflowId,
    decidedBy: sanitizeText(row.decidedBy),
    decidedAt: row.decidedAt.toISOString(),
    replayedAt: isoOrNull(row.replayedAt),
    replayedLetters: row.replayedLetters,
  };
}

function probeDecisionView(row: ClosedAttempt): ProbeDecisionView {
  return {
    attemptId: row.attemptId,
    eventId: row.eventId,
    eventType: row.command,
    outcome: row.probeOutcome ?? 'none',
    read: row.probeEvidence === null ? null : sanitizeText(row.probeEvidence.read),
    shown: row.probeEvidence === null ? null : sanitizeText(row.probeEvidence.shown),
    probedAt: isoOrNull(row.probedAt),
    attemptState:
      row.state === 'started' && row.heldUntil !== null
        ? `waiting for a late effect until ${row.heldUntil.toISOString()}`
        : row.state,
  };
}

export function orderView(order: OrderRow | undefined, orderId: string): OrderSummaryView {
  if (order === undefined) {
    // Known only from its dead letters (its first event never took effect).
    return {
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
    };
  }
  return {
    orderId: order.orderId,
    organizationId: order.organizationId,
    orderNumber: order.orderNumber,
    state: order.state,
    currency: order.currency?.trim() ?? null,
    blocked: order.blockedAt !== null || order.state === 'blocked',
    blockedAt: isoOrNull(order.blockedAt),
    blockedReason: textOrNull(order.blockedReason),
    createdAt: order.createdAt.toISOString(),
    updatedAt: order.updatedAt.toISOString(),
  };
}

export class OrderShowQuery {
  constructor(
    private readonly orders = new OrderRepository(),
    private readonly paymentRows = new PaymentRepository(),
    private readonly installments = new InstallmentRepository(),
    private readonly documents = new DocumentRepository(),
    private readonly refunds = new RefundRepository(),
    private readonly history = new PaymentStatusHistoryRepository(),
    private readonly letters = new DeadLetterRepository(),
    private readonly verdicts = new InDoubtVerdictRepository(),
    private readonly effects = new UnexplainedEffectRepository(),
  ) {}

  /** The order's view, or null when no order and no dead letter has that id. */
  async show(sql: Sql, orderId: string): Promise<OrderView | null> {
    const [order] = await this.orders.byIds(sql, [orderId]);
    const deadLetters = await this.letters.listForOrder(sql, orderId);
    if (order === undefined && deadLetters.length === 0) return null;
    return {
      order: orderView(order, orderId),
      payments: await this.payments(sql, orderId),
      deadLetters: deadLetters.map(deadLetterView),
      inDoubtVerdicts: (await this.verdicts.ofOrder(sql, orderId)).map(verdictView),
      probeDecisions: (await CommandAttemptRepository.listProbed(sql, orderId)).map(
        probeDecisionView,
      ),
    };
  }

  private async payments(sql: Sql, orderId: string): Promise<PaymentView[]> {
    const payments = await this.paymentRows.listForOrder(sql, orderId);
    if (payments.length === 0) return [];
    const ids = payments.map((payment) => payment.id);

    const installmentRows = await this.installments.listForPayments(sql, ids);
    const documentRows = await this.documents.listForPayments(sql, ids);
    const installments = new PaymentRows(installmentRows);
    const documents = new PaymentRows(documentRows);
    const refunds = new PaymentRows(await this.refunds.listForPayments(sql, ids));
    const history = new PaymentRows(await this.history.listForPayments(sql, ids));
    const webhooks = new PaymentRows(await WebhookInboxRepository.listForPayments(sql, ids));
    const effects = unexplainedEffectViews(
      await this.effects.listForOrder(sql, orderId),
      installmentRows,
      documentRows,
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
        paymentRef: payment.paymentRef,
        externalRef: payment.externalRef,
        totalGross: amountView(payment.totalGross, currency),
        totalNet: amountView(payment.totalNet, currency),
        createdAt: payment.createdAt.toISOString(),
        updatedAt: payment.updatedAt.toISOString(),
        lastPolledAt: isoOrNull(payment.lastPolledAt),
        installments: installments.of(payment.id, (row) => installmentView(row, currency)),
        documents: documents.of(payment.id, documentView),
        refunds: refunds.of(payment.id, refundView),
        statusHistory: history.of(payment.id, statusChangeView),
        webhooks: webhooks.of(payment.id, webhookView),
        unexplainedEffects: effects.get(payment.id) ?? [],
      };
    });
  }
}
