/**
 * What `order show` prints: an order, its payments (with installments, documents, refunds,
 * status history, webhooks and what Payflow holds that no event explains), its dead letters
 * and the verdicts on its calls in doubt. The view holds only what an operator needs: never
 * the per-payment api key (nor its hash), the webhook token, event payloads, emails or phone
 * numbers. Amounts are exact decimal text in the currency's major unit.
 */
import type { DeadLetterView } from '../dead-letters/dead-letter.view.js';
import { effectLine, type UnexplainedEffectView } from './unexplained-effect.view.js';

export interface AmountView {
  /** Decimal text in major units, e.g. "1249.50". */
  readonly amount: string;
  readonly currency: string;
}

export interface OrderSummaryView {
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly orderNumber: string | null;
  readonly state: string;
  readonly currency: string | null;
  readonly blocked: boolean;
  readonly blockedAt: string | null;
  readonly blockedReason: string | null;
  /** Null when the order is known only from its dead letters (no event took effect). */
  readonly createdAt: string | null;
  readonly updatedAt: string | null;
}

export interface InstallmentView {
  readonly position: number;
  readonly installmentRef: string | null;
  readonly payflowInstallmentId: string | null;
  readonly type: string | null;
  readonly dueDate: string;
  readonly gross: AmountView;
  readonly providerStatus: string | null;
  readonly removedAt: string | null;
}

export interface DocumentView {
  readonly documentRef: string;
  readonly payflowDocumentId: string | null;
  readonly fileName: string;
  readonly contentType: string;
  readonly size: number;
  readonly createdAt: string;
  readonly removedAt: string | null;
}

export interface RefundView {
  readonly refundRef: string;
  readonly payflowRefundId: string | null;
  readonly refundType: string | null;
  readonly gross: AmountView;
  readonly net: AmountView;
  readonly remaining: AmountView | null;
  readonly createdAt: string;
}

export interface StatusChangeView {
  readonly recordedAt: string;
  readonly source: string;
  readonly previousProviderStatus: string | null;
  readonly providerStatus: string | null;
  readonly status: string | null;
}

/** A webhook Payflow sent about the payment, as the inbox holds it (never its body). */
export interface WebhookView {
  readonly id: string;
  readonly kind: string;
  readonly receivedAt: string;
  readonly lastReceivedAt: string;
  readonly duplicates: number;
  readonly attempts: number;
  readonly processed: boolean;
  readonly processedAt: string | null;
  readonly error: string | null;
}

/** A person's verdict on a call in doubt (`in-doubt resolve`). */
export interface InDoubtVerdictView {
  readonly id: string;
  readonly eventId: string;
  readonly eventType: string;
  /** payment_found or not_created. */
  readonly verdict: string;
  readonly payflowId: string | null;
  readonly decidedBy: string;
  readonly decidedAt: string;
  readonly replayedAt: string | null;
  readonly replayedLetters: number | null;
}

/**
 * A call that may have taken effect, decided by reading Payflow (issue 19): what was read,
 * what it showed, and the outcome (took_effect, not_applied, undecided, unreadable).
 */
export interface ProbeDecisionView {
  readonly attemptId: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly outcome: string;
  readonly read: string | null;
  readonly shown: string | null;
  readonly probedAt: string | null;
  /**
   * The attempt's state now (succeeded, in_doubt, started…), or "waiting for a late effect
   * until T" while it is held (found not applied while its request may still land).
   */
  readonly attemptState: string;
}

export interface PaymentView {
  readonly id: string;
  /** The payment commands act on (the newest). */
  readonly latest: boolean;
  readonly payflowId: string | null;
  readonly organizationId: string | null;
  readonly state: string;
  readonly providerStatus: string | null;
  readonly status: string | null;
  readonly paymentLink: string | null;
  readonly paymentMethodId: string | null;
  /** The ERP's own references of the payment, as sent to Payflow. */
  readonly paymentRef: string | null;
  readonly externalRef: string | null;
  readonly totalGross: AmountView;
  readonly totalNet: AmountView;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly lastPolledAt: string | null;
  readonly installments: readonly InstallmentView[];
  readonly documents: readonly DocumentView[];
  readonly refunds: readonly RefundView[];
  readonly statusHistory: readonly StatusChangeView[];
  readonly webhooks: readonly WebhookView[];
  /** Installments and documents at Payflow that no event of the order explains (issue 26). */
  readonly unexplainedEffects: readonly UnexplainedEffectView[];
}

export interface OrderView {
  readonly order: OrderSummaryView;
  readonly payments: readonly PaymentView[];
  readonly deadLetters: readonly DeadLetterView[];
  readonly inDoubtVerdicts: readonly InDoubtVerdictView[];
  /** Calls that may have taken effect, decided by reading Payflow's state. */
  readonly probeDecisions: readonly ProbeDecisionView[];
}

const DASH = '-';

function show(value: string | number | null | undefined): string {
  return value === null || value === undefined || value === '' ? DASH : String(value);
}

function money(value: AmountView | null): string {
  return value === null ? DASH : `${value.amount} ${value.currency}`;
}

/** Columns padded to their widest cell. */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  indent = '  ',
): string[] {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    (indent + cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ')).trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)];
}

function fields(pairs: readonly (readonly [string, string])[], indent = '  '): string[] {
  const width = Math.max(...pairs.map(([name]) => name.length));
  return pairs.map(([name, value]) => `${indent}${name.padEnd(width)}  ${value}`);
}

function section(title: string, lines: readonly string[], empty: string): string[] {
  return [title, ...(lines.length > 0 ? lines : [`  ${empty}`])];
}

/** How far a payment's tables stand in. */
const PAYMENT_INDENT = '    ';

/** A titled table of rows (indented under the title), or "none". */
function tableSection<T>(
  title: string,
  header: readonly string[],
  items: readonly T[],
  row: (item: T) => string[],
  indent = '',
): string[] {
  return section(
    `${indent}${title}`,
    items.length === 0 ? [] : renderTable(header, items.map(row), `${indent}  `),
    `${indent}none`,
  );
}

/** The human-readable form of an order, as `order show` prints it. */
export function renderOrderView(view: OrderView): string {
  const { order } = view;
  const out: string[] = [];
  out.push(`Order ${order.orderId}`);
  out.push(
    ...fields([
      ['organization', show(order.organizationId)],
      ['order number', show(order.orderNumber)],
      ['state', order.state],
      ['currency', show(order.currency)],
      [
        'blocked',
        order.blocked
          ? `yes, since ${show(order.blockedAt)}${order.blockedReason ? ` (${order.blockedReason})` : ''}`
          : 'no',
      ],
      ['created', show(order.createdAt)],
      ['updated', show(order.updatedAt)],
    ]),
  );

  out.push('');
  out.push(`Payments (${view.payments.length})`);
  if (view.payments.length === 0) out.push('  none');
  for (const payment of view.payments) {
    out.push('');
    out.push(`  Payment ${payment.id}${payment.latest ? ' (latest)' : ''}`);
    out.push(
      ...fields(
        [
          ['Payflow id', show(payment.payflowId)],
          ['state', payment.state],
          [
            'provider status',
            `${show(payment.providerStatus)}${payment.status ? ` (${payment.status})` : ''}`,
          ],
          ['link', show(payment.paymentLink)],
          ['total gross', money(payment.totalGross)],
          ['total net', money(payment.totalNet)],
          ['payment method', show(payment.paymentMethodId)],
          ['payment ref', show(payment.paymentRef)],
          ['external ref', show(payment.externalRef)],
          ['created', payment.createdAt],
          ['last polled', show(payment.lastPolledAt)],
        ],
        '    ',
      ),
    );
    out.push('');
    out.push(
      ...tableSection(
        'Installments',
        ['#', 'ref', 'Payflow id', 'type', 'due date', 'amount', 'status', 'removed'],
        payment.installments,
        (i) => [
          String(i.position),
          show(i.installmentRef),
          show(i.payflowInstallmentId),
          show(i.type),
          i.dueDate,
          money(i.gross),
          show(i.providerStatus),
          show(i.removedAt),
        ],
        PAYMENT_INDENT,
      ),
    );
    out.push(
      ...tableSection(
        'Documents',
        ['ref', 'file name', 'content type', 'bytes', 'Payflow id', 'removed'],
        payment.documents,
        (d) => [
          d.documentRef,
          d.fileName,
          d.contentType,
          String(d.size),
          show(d.payflowDocumentId),
          show(d.removedAt),
        ],
        PAYMENT_INDENT,
      ),
    );
    if (payment.unexplainedEffects.length > 0) {
      out.push(
        `${PAYMENT_INDENT}Found at Payflow without an event of this order (${payment.unexplainedEffects.length})`,
      );
      out.push(
        ...payment.unexplainedEffects.map((effect) => `${PAYMENT_INDENT}  ${effectLine(effect)}`),
      );
    }
    out.push(
      ...tableSection(
        'Refunds',
        ['ref', 'Payflow id', 'type', 'gross', 'net', 'remaining', 'created'],
        payment.refunds,
        (r) => [
          r.refundRef,
          show(r.payflowRefundId),
          show(r.refundType),
          money(r.gross),
          money(r.net),
          money(r.remaining),
          r.createdAt,
        ],
        PAYMENT_INDENT,
      ),
    );
    out.push(
      ...tableSection(
        'Status history',
        ['recorded', 'source', 'previous', 'provider status', 'status'],
        payment.statusHistory,
        (s) => [
          s.recordedAt,
          s.source,
          show(s.previousProviderStatus),
          show(s.providerStatus),
          show(s.status),
        ],
        PAYMENT_INDENT,
      ),
    );
    out.push(
      ...tableSection(
        'Webhooks',
        ['received', 'kind', 'repeats', 'tries', 'processed', 'error'],
        payment.webhooks,
        (w) => [
          w.receivedAt,
          w.kind,
          String(w.duplicates),
          String(w.attempts),
          w.processedAt ?? 'no',
          show(w.error),
        ],
        PAYMENT_INDENT,
      ),
    );
  }

  out.push('');
  const open = view.deadLetters.filter((letter) => !letter.replayed).length;
  out.push(
    ...tableSection(
      `Dead letters (${view.deadLetters.length}, ${open} not replayed)`,
      ['id', 'failed', 'event type', 'reason', 'tries', 'replayed', 'error'],
      view.deadLetters,
      (d) => [
        d.id,
        d.failedAt,
        show(d.eventType),
        d.reason,
        String(d.attempts),
        d.replayedAt ?? 'no',
        d.error,
      ],
    ),
  );
  out.push('');
  out.push(
    ...tableSection(
      `In-doubt verdicts (${view.inDoubtVerdicts.length})`,
      ['#', 'decided', 'by', 'event type', 'verdict', 'Payflow id', 'republished'],
      view.inDoubtVerdicts,
      (v) => [
        v.id,
        v.decidedAt,
        v.decidedBy,
        v.eventType,
        v.verdict,
        show(v.payflowId),
        v.replayedAt === null ? 'not yet' : `${v.replayedLetters ?? 0} at ${v.replayedAt}`,
      ],
    ),
  );
  out.push('');
  out.push(
    ...tableSection(
      `Decided by reading Payflow (${view.probeDecisions.length})`,
      ['attempt', 'probed', 'event type', 'outcome', 'read', 'shown', 'attempt now'],
      view.probeDecisions,
      (p) => [
        p.attemptId,
        show(p.probedAt),
        p.eventType,
        p.outcome,
        show(p.read),
        show(p.shown),
        p.attemptState,
      ],
    ),
  );
  return `${out.join('\n')}\n`;
}
