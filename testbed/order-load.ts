/**
 * Mixed ERP order load for the fault tests and the chaos campaign: seeded scripts of
 * whole order lives (a payment request, then follow-ups of every kind, each valid at
 * Payflow in that order), interleaved at random across orders while each order keeps its
 * own order. Every planned event knows the status event its effect must produce.
 */
import { randomUUID } from 'node:crypto';
import type { OrderEventType } from '../src/events/order-event.schema.js';

/** Small deterministic PRNG (mulberry32): the same seed gives the same run. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The status event type each command's effect produces (docs/events.md). */
export const OUTCOME_OF: Record<OrderEventType, string> = {
  'order.payment_requested': 'payment.created',
  'order.cancelled': 'payment.cancelled',
  'order.refund_requested': 'payment.refunded',
  'order.installment_added': 'installment.added',
  'order.installment_changed': 'installment.changed',
  'order.installment_removed': 'installment.removed',
  'order.marked_paid': 'payment.marked_paid',
  'order.payment_resend_requested': 'payment.resent',
  'order.document_attached': 'document.attached',
  'order.document_removed': 'document.removed',
  'order.terminal_receipt_requested': 'receipt.printed',
};

export interface PlannedEvent {
  readonly eventId: string;
  readonly orderId: string;
  readonly type: OrderEventType;
  /** Position in its order's script (0 = the payment request). */
  readonly seq: number;
  /** The envelope's JSON, as published. */
  readonly value: string;
}

/** What happens to an order after its payment request. */
export type OrderLife =
  'created' | 'documents' | 'installments' | 'resend' | 'receipt' | 'paid-refunded' | 'cancelled';

const LIVES: readonly { life: OrderLife; weight: number }[] = [
  { life: 'created', weight: 30 },
  { life: 'documents', weight: 15 },
  { life: 'installments', weight: 15 },
  { life: 'resend', weight: 10 },
  { life: 'receipt', weight: 10 },
  { life: 'paid-refunded', weight: 10 },
  { life: 'cancelled', weight: 10 },
];

export interface OrderPlan {
  readonly orderId: string;
  readonly life: OrderLife;
  readonly events: readonly PlannedEvent[];
}

function isoDay(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

function paymentRequested(order: number, withInstallments: boolean): Record<string, unknown> {
  return {
    orderNumber: `ON-${order}`,
    customer: {
      type: 'person',
      firstName: 'Kari',
      lastName: 'Nordmann',
      email: 'kari@example.com',
      customerNumber: `C-${order}`,
      billingAddress: { street: 'Storgata 1', postalCode: '0155', city: 'Oslo', countryCode: 'NO' },
    },
    serviceAdvisorEmail: 'advisor@dealer.example',
    vehicles: [{ role: 'new', numberPlate: 'EV12345', brand: 'Volvo', model: 'EX30', year: 2026 }],
    currency: 'NOK',
    // 1000.00 + 25 % VAT = 1250.00 gross.
    lines: [{ description: 'Service package', quantity: 1, unitPriceNet: '1000.00', taxRate: 25 }],
    dueDate: isoDay(14),
    ...(withInstallments
      ? {
          installments: [
            { installmentRef: 'A', date: isoDay(10), amount: '500.00' },
            { installmentRef: 'B', date: isoDay(40), amount: '750.00' },
          ],
        }
      : {}),
  };
}

type Step = readonly [OrderEventType, Record<string, unknown>];

function followUps(life: OrderLife): Step[] {
  const pdf = Buffer.from('%PDF-1.7 fault campaign').toString('base64');
  switch (life) {
    case 'created':
      return [];
    case 'documents':
      return [
        [
          'order.document_attached',
          {
            documentRef: 'D1',
            fileName: 'a.pdf',
            contentType: 'application/pdf',
            contentBase64: pdf,
          },
        ],
        [
          'order.document_attached',
          {
            documentRef: 'D2',
            fileName: 'b.pdf',
            contentType: 'application/pdf',
            contentBase64: pdf,
          },
        ],
        ['order.document_removed', { documentRef: 'D1' }],
      ];
    case 'installments':
      return [
        ['order.installment_added', { installmentRef: 'C', date: isoDay(120), amount: '100.00' }],
        ['order.installment_changed', { installmentRef: 'C', amount: '200.00' }],
        ['order.installment_removed', { installmentRef: 'C' }],
      ];
    case 'resend':
      return [
        [
          'order.payment_resend_requested',
          { paymentMethodId: '000000000000000000000001', terminalId: 'terminal-1' },
        ],
      ];
    case 'receipt':
      // Payflow prints a receipt only for a paid payment.
      return [
        ['order.marked_paid', { note: 'paid at the terminal' }],
        ['order.terminal_receipt_requested', { terminalId: 'terminal-1' }],
      ];
    case 'paid-refunded':
      return [
        ['order.marked_paid', { note: 'paid at the desk' }],
        [
          'order.refund_requested',
          { refundId: 'R-1', amountGross: '125.00', amountNet: '100.00', currency: 'NOK' },
        ],
      ];
    case 'cancelled':
      return [['order.cancelled', { reason: 'customer changed their mind' }]];
  }
}

/** `orders` order lives, their kinds drawn from `seed`. */
export function planOrders(options: {
  readonly prefix: string;
  readonly orders: number;
  readonly seed: number;
}): OrderPlan[] {
  const random = prng(options.seed);
  const total = LIVES.reduce((sum, entry) => sum + entry.weight, 0);
  const plans: OrderPlan[] = [];
  for (let order = 0; order < options.orders; order++) {
    let draw = random() * total;
    let life: OrderLife = 'created';
    for (const entry of LIVES) {
      draw -= entry.weight;
      if (draw < 0) {
        life = entry.life;
        break;
      }
    }
    const orderId = `${options.prefix}-${order}`;
    const steps: Step[] = [
      ['order.payment_requested', paymentRequested(order, life === 'installments')],
      ...followUps(life),
    ];
    const events = steps.map(([type, data], seq): PlannedEvent => {
      const eventId = randomUUID();
      const envelope = {
        eventId,
        type,
        occurredAt: new Date().toISOString(),
        organizationId: 'org-1',
        orderId,
        data,
      };
      return { eventId, orderId, type, seq, value: JSON.stringify(envelope) };
    });
    plans.push({ orderId, life, events });
  }
  return plans;
}

/** Every order's events in one random interleaving that keeps each order's own order. */
export function interleave(plans: readonly OrderPlan[], seed: number): PlannedEvent[] {
  const slots: number[] = [];
  plans.forEach((plan, index) => {
    for (let n = 0; n < plan.events.length; n++) slots.push(index);
  });
  const random = prng(seed);
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swap = slots[i] as number;
    slots[i] = slots[j] as number;
    slots[j] = swap;
  }
  const next = new Array<number>(plans.length).fill(0);
  return slots.map((index) => {
    const plan = plans[index] as OrderPlan;
    const seq = next[index] ?? 0;
    next[index] = seq + 1;
    return plan.events[seq] as PlannedEvent;
  });
}
