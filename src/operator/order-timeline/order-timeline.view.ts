/**
 * An order's whole story as the console shows it, newest last: each ERP event that took
 * effect or was dead-lettered, each Payflow call, each webhook, each event published (status
 * events, settlement lines naming its payment), each verdict a person recorded, each
 * console action, each settlement finding about its payments, and each installment or
 * document found at Payflow that no event of the order explains. Text from outside (errors, reasons) is sanitized; no secret, no customer
 * contact data (the contact is read apart, masked: customer-contact.ts).
 */
import type { AmountView, OrderSummaryView } from '../order-show/order-show.view.js';
import type { FindingView, SettlementLineView } from '../reconciliation/reconciliation.view.js';

export const TIMELINE_KINDS = [
  'erp_event',
  'payflow_call',
  'webhook',
  'status_event',
  'dead_letter',
  'settlement_line',
  'settlement_finding',
  'verdict',
  'console_action',
  'unexplained_effect',
] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** How an entry went: ok, waiting/in doubt, failed, or just information. */
export type TimelineTone = 'ok' | 'warn' | 'bad' | 'info';

export interface TimelineFact {
  readonly label: string;
  readonly value: string;
}

export interface TimelineEntry {
  /** When it happened (ISO 8601). */
  readonly at: string;
  readonly kind: TimelineKind;
  /** One line: what happened. */
  readonly title: string;
  /** How it ended, in a word or two (processed, in doubt, replayed…). */
  readonly outcome: string;
  readonly tone: TimelineTone;
  readonly facts: readonly TimelineFact[];
  /** The W3C trace id of the step, when one was recorded. */
  readonly traceId: string | null;
}

export interface TimelinePayment {
  readonly id: string;
  readonly payflowId: string | null;
  readonly state: string;
  readonly status: string | null;
  readonly total: AmountView;
}

/** An order's settlement: its payments' current settlement lines and the findings. */
export interface OrderSettlement {
  /** By settlement date. */
  readonly lines: readonly SettlementLineView[];
  /** Oldest first. */
  readonly findings: readonly FindingView[];
}

export interface OrderTimeline {
  readonly order: OrderSummaryView;
  readonly payments: readonly TimelinePayment[];
  /** Oldest first (newest last). */
  readonly entries: readonly TimelineEntry[];
  /** Its payments' settlement lines and findings (order-settlement.query.ts). */
  readonly settlement: OrderSettlement;
}

export const KIND_LABELS: Readonly<Record<TimelineKind, string>> = {
  erp_event: 'ERP event',
  payflow_call: 'Payflow call',
  webhook: 'Webhook',
  status_event: 'Status event',
  dead_letter: 'Dead letter',
  settlement_line: 'Settlement line',
  settlement_finding: 'Settlement finding',
  verdict: 'Verdict',
  console_action: 'Console action',
  unexplained_effect: 'Found at Payflow',
};

/** The trace id of a W3C traceparent (`00-<trace id>-<span id>-<flags>`), or null. */
export function traceIdOf(traceparent: string | null | undefined): string | null {
  const match = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '');
  return match?.[1] ?? null;
}

/** The timeline as plain text, for a support ticket. */
export function timelineText(timeline: OrderTimeline): string {
  const { order } = timeline;
  const lines = [
    `Order ${order.orderId}${order.orderNumber === null ? '' : ` (number ${order.orderNumber})`}`,
    `Organization: ${order.organizationId ?? '-'} · state: ${order.state}${order.blocked ? ' (blocked)' : ''}`,
  ];
  for (const payment of timeline.payments) {
    lines.push(
      `Payment ${payment.id} · Payflow ${payment.payflowId ?? '-'} · ${payment.state}` +
        ` · status ${payment.status ?? '-'} · ${payment.total.amount} ${payment.total.currency}`,
    );
  }
  lines.push('', 'Timeline (UTC, oldest first):');
  for (const entry of timeline.entries) {
    const facts = entry.facts.map((fact) => `${fact.label}: ${fact.value}`).join('; ');
    lines.push(
      `${entry.at} · ${KIND_LABELS[entry.kind]} · ${entry.title} · ${entry.outcome}` +
        (facts === '' ? '' : ` · ${facts}`) +
        (entry.traceId === null ? '' : ` · trace ${entry.traceId}`),
    );
  }
  return lines.join('\n');
}
