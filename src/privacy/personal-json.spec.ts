import type { z } from 'zod';
import { envelopeSchema, ORDER_EVENT_DATA_SCHEMAS } from '../events/order-event.schema.js';
import { OUTBOUND_EVENTS } from '../events/outbound-events.js';
import {
  ERASED,
  KEPT_FIELDS,
  PERSONAL_FIELDS,
  parseJson,
  scrubBytes,
  scrubJson,
  sweepText,
  type Json,
} from './personal-json.js';

/** A zod 4 schema's definition, as far as the walk below reads it. */
interface Def {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly innerType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly in?: z.ZodType;
  readonly left?: z.ZodType;
  readonly right?: z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** Every field name of `schema` whose value is (or may be) a string or a number. */
function scalarFields(schema: z.ZodType, into = new Set<string>(), field?: string): Set<string> {
  const def = defOf(schema);
  const inner = [def.innerType, def.element, def.in, def.left, def.right, ...(def.options ?? [])];
  if (def.shape !== undefined) {
    for (const [name, child] of Object.entries(def.shape)) scalarFields(child, into, name);
  }
  for (const child of inner) if (child !== undefined) scalarFields(child, into, field);
  const scalar = ['string', 'number', 'enum', 'literal', 'bigint', 'template_literal'];
  if (field !== undefined && scalar.includes(def.type)) into.add(field);
  return into;
}

/** A payment request as the ERP sends it, with every kind of personal data in it. */
const PAYMENT_REQUESTED = {
  eventId: '8f0c2f7e-5a1b-4c3d-9e8f-0a1b2c3d4e5f',
  type: 'order.payment_requested',
  occurredAt: '2026-11-20T10:00:00Z',
  organizationId: 'org-1',
  orderId: 'SO-1001',
  data: {
    orderNumber: '1001',
    customer: {
      type: 'person',
      firstName: 'Kari',
      lastName: 'Nordmann',
      email: 'kari.nordmann@example.no',
      phone: { countryCode: '+47', number: '91234567' },
      customerNumber: 'C-42',
      billingAddress: { street: 'Storgata 1', postalCode: '0155', city: 'Oslo' },
    },
    serviceAdvisorEmail: 'per@dealer.example',
    vehicles: [
      { role: 'new', numberPlate: 'EV 12345', vin: 'WVWZZZ1JZXW000001', brand: 'VW', year: 2024 },
    ],
    currency: 'NOK',
    lines: [{ description: 'Service for Kari', quantity: 1, unitPriceNet: '999.20', taxRate: 25 }],
    dueDate: '2026-12-01',
    sendPaymentLink: true,
    invoiceComments: 'Call Kari on 912 34 567',
  },
};

describe('scrubJson', () => {
  it('erases names, e-mail, phone, address, VIN, plate and free text, and keeps the rest', () => {
    const scrubbed = scrubJson(PAYMENT_REQUESTED);
    expect(scrubbed).toEqual({
      ...PAYMENT_REQUESTED,
      data: {
        orderNumber: '1001',
        customer: {
          type: 'person',
          firstName: ERASED,
          lastName: ERASED,
          email: ERASED,
          phone: { countryCode: ERASED, number: ERASED },
          customerNumber: ERASED,
          billingAddress: { street: ERASED, postalCode: ERASED, city: ERASED },
        },
        serviceAdvisorEmail: ERASED,
        vehicles: [{ role: 'new', numberPlate: ERASED, vin: ERASED, brand: 'VW', year: 2024 }],
        currency: 'NOK',
        lines: [{ description: ERASED, quantity: 1, unitPriceNet: '999.20', taxRate: 25 }],
        dueDate: '2026-12-01',
        sendPaymentLink: true,
        invoiceComments: ERASED,
      },
    });
  });

  it('erases fields nobody classified, also in an event that failed its schema', () => {
    const odd = { orderId: 'SO-1', data: { client: { mail: 'a@b.example' }, notes: ['x', 7] } };
    expect(scrubJson(odd)).toEqual({
      orderId: 'SO-1',
      data: { client: { mail: ERASED }, notes: [ERASED, ERASED] },
    });
  });

  it('is idempotent: scrubbing a scrubbed value finds nothing more', () => {
    const once = scrubJson(PAYMENT_REQUESTED);
    const found = new Set<string>();
    expect(scrubJson(once, found)).toEqual(once);
    expect(found.size).toBe(0);
  });

  it('keeps a reason that is a dead-letter reason, erases one that is free text', () => {
    expect(scrubJson({ reason: 'rejected_by_payflow' })).toEqual({ reason: 'rejected_by_payflow' });
    expect(scrubJson({ reason: 'Kari moved abroad' })).toEqual({ reason: ERASED });
  });
});

describe('scrubBytes', () => {
  it('writes valid JSON back and says what it erased', () => {
    const result = scrubBytes(Buffer.from(JSON.stringify(PAYMENT_REQUESTED)));
    expect(result.changed).toBe(true);
    expect(parseJson(result.bytes)).toEqual(scrubJson(PAYMENT_REQUESTED as Json));
    expect(result.erased).toEqual(
      expect.arrayContaining(['Kari', 'kari.nordmann@example.no', '91234567', 'WVWZZZ1JZXW000001']),
    );
    expect(scrubBytes(result.bytes).changed).toBe(false);
  });

  it('erases bytes that are not JSON whole', () => {
    expect(scrubBytes(Buffer.from('{"email": "kari@')).bytes.toString()).toBe(ERASED);
    expect(scrubBytes(Buffer.from(ERASED)).changed).toBe(false);
    expect(scrubBytes(Buffer.from([0xff, 0xfe])).changed).toBe(true);
  });
});

describe('sweepText', () => {
  it('replaces every erased value quoted in a text, longest first', () => {
    const erased = ['Kari', 'Kari Nordmann', 'kari.nordmann@example.no', 'NO'];
    expect(
      sweepText('Payflow: invalid email kari.nordmann@example.no for Kari Nordmann (NO)', erased),
    ).toBe(`Payflow: invalid email ${ERASED} for ${ERASED} (NO)`);
  });
});

describe('the field lists', () => {
  it('do not overlap', () => {
    expect([...KEPT_FIELDS].filter((field) => PERSONAL_FIELDS.has(field))).toEqual([]);
  });

  it('classify every field of every ERP event and status event (a new field needs a decision)', () => {
    const fields = scalarFields(envelopeSchema);
    for (const schema of Object.values(ORDER_EVENT_DATA_SCHEMAS)) scalarFields(schema, fields);
    for (const spec of Object.values(OUTBOUND_EVENTS)) {
      if (spec.topic === 'paymentStatus') scalarFields(spec.schema, fields);
    }
    const unclassified = [...fields].filter(
      (field) => !KEPT_FIELDS.has(field) && !PERSONAL_FIELDS.has(field),
    );
    expect(unclassified.sort()).toEqual([]);
  });
});
