/**
 * What `in-doubt list` prints: one item per Payflow call in doubt, with what was sent (for
 * a creation: organization, total, lines and installments; otherwise the command, its
 * reference and the payment it acted on), when, the error, and what the bridge knows. The
 * JSON field names are part of the operator interface (docs/operations.md): add, never
 * rename. Of the event's payload only counts and references are taken: no customer data.
 */
import { z } from 'zod';
import { amountView } from '../show/order-show.query.js';
import { renderTable, type AmountView } from '../show/order-show.view.js';
import type { InDoubtRow } from './in-doubt.repository.js';

export const PAYMENT_CREATION = 'order.payment_requested';

export interface InDoubtItem {
  readonly orderId: string;
  readonly eventId: string;
  /** The order event whose Payflow call is in doubt (order.payment_requested, …). */
  readonly eventType: string;
  readonly attemptId: string;
  readonly organizationId: string | null;
  /** What was sent. */
  readonly sent: {
    /** A creation's total (gross); null for other commands. */
    readonly total: AmountView | null;
    /** A creation's lines, from the dead-lettered event; null when unknown or not a creation. */
    readonly lines: number | null;
    /** A creation's planned installments; null when unknown or not a creation. */
    readonly installments: number | null;
    /** Another command's reference: `refundId=…`, `installmentRef=…`, `documentRef=…`, … */
    readonly reference: string | null;
  };
  /** When the attempt started, when its request left (sent_at), when it became in doubt. */
  readonly startedAt: string;
  readonly sentAt: string | null;
  readonly inDoubtSince: string | null;
  readonly errorCode: string | null;
  /** What the bridge knows of the payment: the one being created, or the command's target. */
  readonly payment: {
    readonly id: string | null;
    readonly state: string | null;
    readonly payflowId: string | null;
  };
  /** The order's other dead letters waiting for a replay (its later events). */
  readonly parkedEvents: number;
  readonly blocked: boolean;
}

const REFERENCES = [
  'refundId',
  'installmentRef',
  'documentRef',
  'paymentMethodId',
  'terminalId',
] as const;

const payload = z.object({
  data: z
    .object({
      lines: z.array(z.unknown()).optional(),
      installments: z
        .union([z.array(z.unknown()), z.object({ count: z.number().int() })])
        .optional(),
      ...Object.fromEntries(REFERENCES.map((name) => [name, z.unknown().optional()])),
    })
    .optional(),
});

interface Sent {
  readonly lines: number | null;
  readonly installments: number | null;
  readonly reference: string | null;
}

/** Counts and references of the dead-lettered event (its value), nothing else. */
function whatWasSent(value: Buffer | null): Sent {
  if (value === null) return { lines: null, installments: null, reference: null };
  let json: unknown;
  try {
    json = JSON.parse(value.toString('utf8'));
  } catch {
    return { lines: null, installments: null, reference: null };
  }
  const parsed = payload.safeParse(json);
  const data = parsed.success ? parsed.data.data : undefined;
  if (data === undefined) return { lines: null, installments: null, reference: null };
  const plan = data.installments;
  const reference = REFERENCES.flatMap((name) => {
    const ref: unknown = Reflect.get(data, name);
    return typeof ref === 'string' && ref.length > 0 ? [`${name}=${ref.slice(0, 80)}`] : [];
  })[0];
  return {
    lines: data.lines?.length ?? null,
    installments: plan === undefined ? null : Array.isArray(plan) ? plan.length : plan.count,
    reference: reference ?? null,
  };
}

export function inDoubtItem(row: InDoubtRow): InDoubtItem {
  const creation = row.command === PAYMENT_CREATION;
  const sent = whatWasSent(row.letterValue);
  const currency = row.currency?.trim() ?? null;
  return {
    orderId: row.orderId,
    eventId: row.eventId,
    eventType: row.command,
    attemptId: row.attemptId,
    organizationId: row.organizationId,
    sent: {
      total:
        creation && row.totalGross !== null && currency !== null
          ? amountView(row.totalGross, currency)
          : null,
      lines: creation ? sent.lines : null,
      installments: creation
        ? (sent.installments ?? (row.plannedInstallments > 0 ? row.plannedInstallments : null))
        : null,
      reference: creation ? null : sent.reference,
    },
    startedAt: row.startedAt.toISOString(),
    sentAt: row.sentAt?.toISOString() ?? null,
    inDoubtSince: row.inDoubtSince?.toISOString() ?? null,
    errorCode: row.errorCode,
    payment: { id: row.paymentId, state: row.paymentState, payflowId: row.payflowId },
    parkedEvents: row.parked,
    blocked: row.blocked,
  };
}

const DASH = '-';

/** One cell saying what was sent. */
export function describeSent(item: InDoubtItem): string {
  if (item.eventType === PAYMENT_CREATION) {
    const parts = [
      item.organizationId ?? 'no organization',
      item.sent.total === null
        ? 'total ?'
        : `${item.sent.total.amount} ${item.sent.total.currency}`,
      `${item.sent.lines ?? '?'} line(s)`,
      `${item.sent.installments ?? 0} installment(s)`,
    ];
    return `create: ${parts.join(', ')}`;
  }
  const target = item.payment.payflowId ?? item.payment.id ?? '?';
  return `${item.eventType.replace(/^order\./, '')}${item.sent.reference === null ? '' : ` ${item.sent.reference}`} on payment ${target}`;
}

function knows(item: InDoubtItem): string {
  const state = item.payment.state ?? 'no payment';
  return item.eventType === PAYMENT_CREATION
    ? `payment ${state}, Payflow id ${item.payment.payflowId ?? 'unknown'}`
    : `payment ${state}`;
}

/** The human-readable table of `in-doubt list`. */
export function renderInDoubtList(items: readonly InDoubtItem[]): string {
  if (items.length === 0) return 'No Payflow call is in doubt.\n';
  const table = renderTable(
    ['order', 'event', 'event id', 'sent', 'started', 'sent at', 'error', 'bridge knows', 'parked'],
    items.map((item) => [
      item.orderId,
      item.eventType,
      item.eventId,
      describeSent(item),
      item.startedAt,
      item.sentAt ?? DASH,
      item.errorCode ?? DASH,
      knows(item),
      `${item.parkedEvents}${item.blocked ? ' (blocked)' : ''}`,
    ]),
    '',
  );
  return `${[`${items.length} Payflow call(s) in doubt:`, ...table].join('\n')}\n`;
}
