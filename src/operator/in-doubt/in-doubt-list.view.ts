/**
 * What `in-doubt list` prints: one item per Payflow call in doubt, with what was sent (for
 * a creation: organization, total, lines and installments; otherwise the command, its
 * reference and the payment it acted on), when, the error, and what the bridge knows:
 * whether the request left at all (its send mark, `sent_at`) and how long ago, and which
 * webhooks Payflow sent for the payment since. The
 * JSON field names are part of the operator interface (docs/operations.md): add, never
 * rename. Of the event's payload only counts and references are taken: no customer data.
 */
import { z } from 'zod';
import { PAYMENT_CREATION, type InDoubtRow } from '../../orders/in-doubt/in-doubt-calls.port.js';
import { amountView } from '../order-show/order-show.query.js';
import { renderTable, type AmountView } from '../order-show/order-show.view.js';

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
  /**
   * Whether the request left the process, by its send mark: `sent_at` is committed just
   * before the request is written, and the request is written only once that commit is
   * acknowledged. `left` false ("never left"): no mark was committed, so this attempt's
   * request was never written (the mark failed and the socket was closed before a byte went
   * out, or the call waited behind a 429, for a connection or a token); the attempt is in
   * doubt only because its error said the call may have taken effect, or it predates the
   * send mark (an attempt recorded before `sent_at` existed has none).
   */
  readonly request: {
    readonly left: boolean;
    /** Whole seconds from `sent_at` to the listing; null when it never left. */
    readonly leftSecondsAgo: number | null;
  };
  /**
   * The webhooks Payflow sent for the payment (by the webhook token of its callback URL):
   * a creation's webhook is Payflow saying the payment exists. Counts and times only.
   */
  readonly webhooks: {
    /** Stored webhooks (a redelivery with the same content counts once). */
    readonly received: number;
    /** Of them, not processed yet (the worker's inbox processor takes them in turn). */
    readonly unprocessed: number;
    readonly firstReceivedAt: string | null;
    readonly lastReceivedAt: string | null;
    /** The kinds received (status-update, …), each once, in the order they first came. */
    readonly kinds: readonly string[];
  };
  /**
   * What reading Payflow found before the call was parked (issue 19: a follow-up is read
   * at Payflow before it is called in doubt); null when it was never probed (creations,
   * refunds and receipt prints cannot be read back). `unreadable`: Payflow could not be
   * read, so a person decides; `evidence` says what was read and what it showed.
   */
  readonly probe: {
    readonly outcome: string;
    readonly evidence: { readonly read: string; readonly shown: string } | null;
    readonly probedAt: string | null;
  } | null;
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
  /**
   * A call held for a late effect (not in doubt): found not applied while its request may
   * still land (PAYFLOW_LATE_EFFECT_WINDOW); Payflow is read again until then, and the call
   * is sent again only after it. Null for a call in doubt.
   */
  readonly waitingForLateEffectUntil: string | null;
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

/** The item of a row; `now` is the moment of the listing (for how long ago it left). */
export function inDoubtItem(row: InDoubtRow, now: Date = new Date()): InDoubtItem {
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
    request: {
      left: row.sentAt !== null,
      leftSecondsAgo:
        row.sentAt === null
          ? null
          : Math.max(0, Math.floor((now.getTime() - row.sentAt.getTime()) / 1000)),
    },
    webhooks: {
      received: row.webhooks.length,
      unprocessed: row.webhooks.filter((webhook) => webhook.processedAt === null).length,
      firstReceivedAt: row.webhooks[0]?.receivedAt.toISOString() ?? null,
      lastReceivedAt:
        row.webhooks.length === 0
          ? null
          : new Date(
              Math.max(...row.webhooks.map((webhook) => webhook.lastReceivedAt.getTime())),
            ).toISOString(),
      kinds: [...new Set(row.webhooks.map((webhook) => webhook.kind))],
    },
    probe:
      row.probeOutcome === null
        ? null
        : {
            outcome: row.probeOutcome,
            evidence: row.probeEvidence,
            probedAt: row.probedAt?.toISOString() ?? null,
          },
    errorCode: row.errorCode,
    payment: { id: row.paymentId, state: row.paymentState, payflowId: row.payflowId },
    parkedEvents: row.parked,
    blocked: row.blocked,
    waitingForLateEffectUntil: row.heldUntil?.toISOString() ?? null,
  };
}

const DASH = '-';

/** A duration in whole seconds, as `45s`, `12m`, `3h 05m`, `2d 4h`. */
export function describeAge(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** When the request left and how long ago, or that it never left (no send mark). */
export function describeLeft(item: InDoubtItem): string {
  if (!item.request.left || item.sentAt === null) return 'never left (no send mark)';
  return `${item.sentAt} (${describeAge(item.request.leftSecondsAgo ?? 0)} ago)`;
}

/** The webhooks received for the payment: `none`, or how many, which and when. */
export function describeWebhooks(item: InDoubtItem): string {
  const { received, unprocessed, kinds, lastReceivedAt } = item.webhooks;
  if (received === 0) return 'none';
  const pending = unprocessed === 0 ? '' : `, ${unprocessed} not processed yet`;
  return `${received} (${kinds.join(', ')}; last ${lastReceivedAt ?? '?'}${pending})`;
}

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

/** What reading Payflow found: `-` when never probed, else the outcome and its evidence. */
export function describeProbe(item: InDoubtItem): string {
  if (item.probe === null) return DASH;
  const evidence = item.probe.evidence;
  return evidence === null
    ? item.probe.outcome
    : `${item.probe.outcome}: ${evidence.read} showed ${evidence.shown}`;
}

/** The line every reader shows for a held call: "waiting for a late effect until T". */
export function describeWaiting(item: InDoubtItem): string | null {
  const until = item.waitingForLateEffectUntil;
  return until === null ? null : `waiting for a late effect until ${until}`;
}

/** The calls held for a late effect, after the calls in doubt in `in-doubt list`. */
export function renderWaitingList(items: readonly InDoubtItem[]): string {
  if (items.length === 0) return 'No Payflow call is waiting for a late effect.\n';
  const table = renderTable(
    ['order', 'event', 'event id', 'sent', 'request left', 'waiting', 'Payflow read'],
    items.map((item) => [
      item.orderId,
      item.eventType,
      item.eventId,
      describeSent(item),
      describeLeft(item),
      describeWaiting(item) ?? DASH,
      describeProbe(item),
    ]),
    '',
  );
  return `${[
    `${items.length} Payflow call(s) waiting for a late effect (not sent again before then):`,
    ...table,
  ].join('\n')}\n`;
}

/** The human-readable table of `in-doubt list`. */
export function renderInDoubtList(items: readonly InDoubtItem[]): string {
  if (items.length === 0) return 'No Payflow call is in doubt.\n';
  const table = renderTable(
    [
      'order',
      'event',
      'event id',
      'sent',
      'started',
      'request left',
      'error',
      'bridge knows',
      'webhooks',
      'Payflow read',
      'parked',
    ],
    items.map((item) => [
      item.orderId,
      item.eventType,
      item.eventId,
      describeSent(item),
      item.startedAt,
      describeLeft(item),
      item.errorCode ?? DASH,
      knows(item),
      describeWebhooks(item),
      describeProbe(item),
      `${item.parkedEvents}${item.blocked ? ' (blocked)' : ''}`,
    ]),
    '',
  );
  return `${[`${items.length} Payflow call(s) in doubt:`, ...table].join('\n')}\n`;
}
