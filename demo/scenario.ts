/**
 * What the demo's "ERP" publishes (CONTRACT §2) and what it expects back (§3, §4).
 *
 * Order ids are fixed: every run starts with a fresh Kafka cluster, sandbox and database,
 * so they never collide, and the screen reads the same run after run.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { ORDER_EVENT_DATA_SCHEMAS, OrderEventType } from '../src/events/order-event.schema.js';
import type { PayerStep } from './payer.js';

/** The `data` an ERP may send with an event of type T (amounts as text or numbers). */
export type EventData<T extends OrderEventType> = z.input<(typeof ORDER_EVENT_DATA_SCHEMAS)[T]>;

export interface Envelope {
  readonly eventId: string;
  readonly type: string;
  readonly occurredAt: string;
  readonly organizationId: string;
  readonly orderId: string;
  readonly data: Record<string, unknown>;
}

/** One Kafka message to erp.orders.v1, keyed by order id. */
export interface ErpMessage {
  readonly key: string;
  /** The JSON text of an envelope, or whatever a broken ERP sends. */
  readonly value: string;
  /** What the screen says was published. */
  readonly summary: string;
}

/**
 * An outcome the demo waits for: a status event type (with these `data` fields, if given),
 * or a dead letter with its reason.
 */
export type Expected =
  | {
      readonly topic: 'status';
      readonly type: string;
      readonly data?: Readonly<Record<string, string>>;
    }
  | { readonly topic: 'dlq'; readonly reason: string };

export interface DemoOrder {
  readonly orderId: string;
  /** One line on the screen: what this order shows. */
  readonly title: string;
  readonly messages: readonly ErpMessage[];
  /** What the payer does in the sandbox once the payment exists (payer.ts), if anything. */
  readonly payer?: PayerStep;
  readonly expected: readonly Expected[];
}

export const ORGANIZATION_ID = 'org-1';

/** YYYY-MM-DD, `days` after `today` (UTC). */
export function addDays(today: Date, days: number): string {
  return new Date(today.getTime() + days * 86_400_000).toISOString().slice(0, 10);
}

/** The first day of the month `months` after today's month (UTC), YYYY-MM-DD. */
export function firstOfMonth(today: Date, months: number): string {
  return new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + months, 1))
    .toISOString()
    .slice(0, 10);
}

/** An envelope; `data` is whatever the ERP sends (valid or not). */
function envelope(type: string, orderId: string, data: object, now: Date): Envelope {
  return {
    eventId: randomUUID(),
    type,
    occurredAt: now.toISOString(),
    organizationId: ORGANIZATION_ID,
    orderId,
    data: { ...data },
  };
}

function message<T extends OrderEventType>(
  type: T,
  orderId: string,
  data: EventData<T>,
  summary: string,
  now: Date,
): ErpMessage {
  return { key: orderId, value: JSON.stringify(envelope(type, orderId, data, now)), summary };
}

const customer = {
  type: 'person',
  firstName: 'Kari',
  lastName: 'Nordmann',
  email: 'kari.nordmann@example.com',
  phone: { countryCode: '+47', number: '41234567' },
  customerNumber: 'C-1077',
  billingAddress: { street: 'Storgata 1', postalCode: '0155', city: 'Oslo', countryCode: 'NO' },
} as const;

/** The demo's ERP orders, in the order they are published. */
export function demoOrders(now: Date = new Date()): DemoOrder[] {
  const dueDate = addDays(now, 14);

  const single: EventData<'order.payment_requested'> = {
    orderNumber: 'ON-10042',
    customer,
    serviceAdvisorEmail: 'ola.hansen@dealer.example',
    vehicles: [
      {
        role: 'new',
        brand: 'Volvo',
        model: 'EX30 Twin Motor Performance',
        color: 'Moss Yellow',
        year: 2026,
        vin: 'YV1EX30AB12345678',
      },
    ],
    currency: 'NOK',
    lines: [
      {
        description: 'Volvo EX30 Twin Motor Performance',
        quantity: 1,
        unitPriceNet: '431920.00',
        taxRate: 25,
        discountRate: 3,
      },
      {
        description: 'Winter wheels 19", mounted',
        quantity: 1,
        unitPriceNet: '14800.00',
        taxRate: 25,
      },
      {
        description: 'Delivery and registration',
        quantity: 1,
        unitPriceNet: '6990.00',
        taxRate: 25,
        lineType: 'shipping',
      },
    ],
    dueDate,
    invoiceNumber: 'INV-2026-10042',
  };

  const plan: EventData<'order.payment_requested'> = {
    orderNumber: 'ON-10043',
    customer: { ...customer, firstName: 'Per', lastName: 'Hansen', customerNumber: 'C-2088' },
    serviceAdvisorEmail: 'ola.hansen@dealer.example',
    vehicles: [{ role: 'other', numberPlate: 'EL12345', brand: 'Tesla', model: 'Model Y' }],
    currency: 'NOK',
    lines: [
      {
        description: 'Major service, 60 000 km',
        quantity: 1,
        unitPriceNet: '6400.00',
        taxRate: 25,
      },
      {
        description: 'Winter tyres 19"',
        quantity: 4,
        unitPriceNet: '1899.00',
        taxRate: 25,
        discountRate: 10,
      },
      { description: 'Tyre hotel, one season', quantity: 1, unitPriceNet: '1200.00', taxRate: 25 },
    ],
    dueDate,
    installments: { count: 3, firstDate: firstOfMonth(now, 1), intervalMonths: 1 },
  };

  const tradeIn: EventData<'order.payment_requested'> = {
    orderNumber: 'ON-10044',
    customer: {
      type: 'company',
      companyName: 'Fjord Rørlegger AS',
      email: 'post@fjord-ror.example',
      customerNumber: 'C-3099',
    },
    serviceAdvisorEmail: 'ola.hansen@dealer.example',
    vehicles: [
      { role: 'new', brand: 'Volvo', model: 'XC60 T6 Recharge', year: 2026 },
      { role: 'tradeIn', numberPlate: 'DJ45678', brand: 'Toyota', model: 'RAV4', year: 2017 },
    ],
    currency: 'NOK',
    lines: [
      {
        description: 'Volvo XC60 T6 Recharge, price after trade-in of DJ45678',
        quantity: 1,
        unitPriceNet: '412000.00',
        taxRate: 25,
      },
      { description: 'Tow bar', quantity: 1, unitPriceNet: '9800.00', taxRate: 25 },
    ],
    dueDate,
  };

  const { currency: _currency, ...withoutCurrency } = {
    ...single,
    orderNumber: 'ON-10045',
    vehicles: [],
    lines: [{ description: 'Brake pads', quantity: 1, unitPriceNet: '2490.00', taxRate: 25 }],
  };

  const addedDate = firstOfMonth(now, 4);
  return [
    {
      orderId: 'SO-10042',
      title: 'single payment: a new Volvo EX30, 3 lines, 3 % off the car; paid',
      messages: [
        message('order.payment_requested', 'SO-10042', single, 'order.payment_requested', now),
      ],
      payer: { action: 'paid' },
      expected: [
        { topic: 'status', type: 'payment.created' },
        {
          topic: 'status',
          type: 'payment.status_changed',
          data: { status: 'paid', source: 'webhook' },
        },
      ],
    },
    {
      orderId: 'SO-10043',
      title: 'installment plan: service and winter tyres in 3 monthly parts; the 1st paid',
      messages: [
        message(
          'order.payment_requested',
          'SO-10043',
          plan,
          'order.payment_requested  installments { count: 3, intervalMonths: 1 }',
          now,
        ),
        message(
          'order.installment_added',
          'SO-10043',
          { installmentRef: 'extra-1', date: addedDate, amount: '1500.00' },
          `order.installment_added  extra-1, ${addedDate}, 1500.00`,
          now,
        ),
      ],
      payer: { action: 'installment_paid' },
      expected: [
        { topic: 'status', type: 'payment.created' },
        { topic: 'status', type: 'installment.added' },
        {
          topic: 'status',
          type: 'installment.status_changed',
          data: { installmentRef: '1', providerStatus: 'PAID' },
        },
      ],
    },
    {
      orderId: 'SO-10044',
      title: 'trade-in: a new Volvo XC60 for a 2017 Toyota RAV4, then cancelled',
      messages: [
        message('order.payment_requested', 'SO-10044', tradeIn, 'order.payment_requested', now),
        message(
          'order.cancelled',
          'SO-10044',
          { reason: 'customer withdrew from the deal' },
          'order.cancelled  "customer withdrew from the deal"',
          now,
        ),
      ],
      expected: [
        { topic: 'status', type: 'payment.created' },
        { topic: 'status', type: 'payment.cancelled' },
      ],
    },
    {
      orderId: 'SO-10045',
      title: 'invalid: a payment request without a currency',
      messages: [
        {
          key: 'SO-10045',
          value: JSON.stringify(
            envelope('order.payment_requested', 'SO-10045', withoutCurrency, now),
          ),
          summary: 'order.payment_requested  (no currency)',
        },
      ],
      expected: [{ topic: 'dlq', reason: 'invalid_event' }],
    },
    {
      orderId: 'SO-10046',
      title: 'not JSON: a CSV line from a misconfigured export',
      messages: [
        {
          key: 'SO-10046',
          value: 'SO-10046;ON-10046;NOK;1990.00',
          summary: 'SO-10046;ON-10046;NOK;1990.00',
        },
      ],
      expected: [{ topic: 'dlq', reason: 'invalid_json' }],
    },
  ];
}
