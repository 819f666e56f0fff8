/**
 * Generated ERP order events (CONTRACT §2), each with what the worker must do with it.
 *
 * A case starts from a valid envelope of one of the eleven types (payment requests get
 * generated customers, lines, currencies and plans) and usually breaks it: a field of the
 * wrong type, a required one missing, empty or null, a string over its limit or of 2 MB, an
 * impossible date (2026-02-30), a negative, zero, absurd (1e30) or non-numeric amount, JSON
 * nested 5,000 deep, invalid UTF-8 bytes, no JSON at all, a JSON value that is no object,
 * a duplicated JSON key, an unknown type or organization, a Kafka key that is not the
 * orderId (up to 100,000 characters), a NUL character; sometimes junk Kafka headers on top.
 * Those must be dead-lettered, with a reason the case allows: invalid_json or invalid_event
 * for what the schema refuses, and mapping_failed or rejected_by_payflow too for well-formed
 * requests nobody can collect (totals of zero or below, 1e30, plans that do not add up).
 * Valid events are mixed in, some carrying what the contract lets through (unknown extra
 * fields, even 5,000 deep or 2 MB; a UTF-8 BOM; no Kafka key; odd Kafka headers; unusual
 * orderIds, occurredAt values and amount spellings): those must take effect.
 *
 * Generation is seeded (fast-check's `sample`; dates are relative to today). Each case gets
 * its orderId and eventId from its position, so no two cases share an order or an event.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { DeadLetterReason } from '../../../src/errors/app-error.js';
import { ORDER_EVENT_TYPES, type OrderEventType } from '../../../src/events/order-event.schema.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type ErpExpectation =
  | { readonly outcome: 'dead_letter'; readonly reasons: readonly DeadLetterReason[] }
  | { readonly outcome: 'applied' }
  /** Its eventId took effect before (for the order `of`): a redelivery, nothing happens. */
  | { readonly outcome: 'duplicate'; readonly of: string };

export interface ErpCase {
  readonly index: number;
  /** The family of the case (wrong_type, bad_date, valid, …). */
  readonly kind: string;
  /** What exactly was done to it, e.g. `data.lines.0.taxRate := "abc"`. */
  readonly detail: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Readonly<Record<string, Buffer>> | undefined;
  /** The order the case would act on (its Kafka key, or the orderId it was built with). */
  readonly orderId: string;
  readonly eventId: string;
  readonly type: OrderEventType;
  readonly expect: ErpExpectation;
}

export interface CaseIds {
  readonly index: number;
  readonly orderId: string;
  readonly eventId: string;
}

/** Builds a case from the ids of its position. */
export type CaseRecipe = (ids: CaseIds) => ErpCase;

export const MIB = 1024 * 1024;
/** Bytes (UTF-8) of the huge strings. */
export const HUGE_STRING_BYTES = 2 * MIB;
export const NESTING_DEPTH = 5_000;

const INVALID_EVENT: readonly DeadLetterReason[] = ['invalid_event'];
const INVALID_JSON: readonly DeadLetterReason[] = ['invalid_json'];
/** Well-formed but unusable: refused by the schema, the mapping or Payflow. */
const UNUSABLE: readonly DeadLetterReason[] = [
  'invalid_event',
  'mapping_failed',
  'rejected_by_payflow',
];

/**
 * Whether Kafka keys that are not NUL-free UTF-8 are generated. They are not: the outbox
 * keeps a message's key as Postgres text, so the dead letter of such an event cannot carry
 * its key unchanged (an invalid byte becomes U+FFFD) or cannot be written at all (NUL: the
 * dead-letter sink retries forever and the partition stops). A known defect of the outbox,
 * not of the parsing these tests watch; turn this on once the outbox keeps keys as bytes.
 */
export const BINARY_KEYS = false;

// ------------------------------------------------------------------------------ ids

/** orderId and eventId (a v4 UUID) of the case at `index`: unique and reproducible. */
export function caseIds(seed: number, index: number, prefix = 'PROP'): CaseIds {
  const hex = createHash('sha256').update(`${seed}:${index}`).digest('hex');
  const eventId = [
    hex.slice(0, 8),
    hex.slice(8, 12),
    `4${hex.slice(13, 16)}`,
    `${'89ab'[parseInt(hex.slice(16, 17), 16) % 4] ?? '8'}${hex.slice(17, 20)}`,
    hex.slice(20, 32),
  ].join('-');
  return { index, orderId: `${prefix}-${seed}-${String(index).padStart(6, '0')}`, eventId };
}

/** `runs` cases from `seed`, in the order they are to be published. */
export function generateErpCases(runs: number, seed: number): ErpCase[] {
  const recipes = fc.sample(erpCaseArbitrary(), { numRuns: runs, seed });
  return recipes.map((recipe, index) => recipe(caseIds(seed, index)));
}

// ----------------------------------------------------------------------- valid events

/** YYYY-MM-DD `days` from today (UTC). */
export function isoDay(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

const letters = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 });
/** Printable text of at most `max` UTF-16 units with something else than spaces. */
const textUpTo = (max: number): fc.Arbitrary<string> =>
  letters.filter((text) => text.length <= max && text.trim() !== '' && !text.includes('\u0000'));
const asciiWord = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/);
const email = fc.tuple(asciiWord, asciiWord).map(([local, domain]) => `${local}@${domain}.example`);
const digits = (length: number) => fc.stringMatching(new RegExp(`^[0-9]{${length}}$`));

/** A decimal amount in either form the contract allows: "1249.50" or 1249.5. */
const amountOf = (cents: number, asNumber: boolean): Json =>
  asNumber ? cents / 100 : (cents / 100).toFixed(2);

const lineArbitrary: fc.Arbitrary<JsonObject> = fc
  .record({
    description: textUpTo(60),
    quantity: fc.integer({ min: 1, max: 20 }),
    cents: fc.integer({ min: 100, max: 2_000_000 }),
    taxRate: fc.constantFrom<Json>(0, 12, 15, 25, '25', '12.5'),
    discountRate: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
    lineType: fc.option(fc.constantFrom('regular', 'shipping'), { nil: undefined }),
    asNumbers: fc.boolean(),
  })
  .map((line) => ({
    description: line.description,
    quantity: line.asNumbers ? line.quantity : String(line.quantity),
    unitPriceNet: amountOf(line.cents, line.asNumbers),
    taxRate: line.taxRate,
    ...(line.discountRate === undefined ? {} : { discountRate: line.discountRate }),
    ...(line.lineType === undefined ? {} : { lineType: line.lineType }),
  }));

const customerArbitrary: fc.Arbitrary<JsonObject> = fc
  .record(
    {
      type: fc.constantFrom('person', 'company'),
      firstName: textUpTo(40),
      lastName: textUpTo(40),
      companyName: textUpTo(60),
      email,
      phone: fc.record({ countryCode: fc.constantFrom('+47', '+46', '+45'), number: digits(8) }),
      customerNumber: asciiWord,
      billingAddress: fc.record(
        {
          street: textUpTo(60),
          postalCode: digits(4),
          city: textUpTo(40),
          countryCode: fc.constantFrom('NO', 'SE', 'DK'),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  )
  .map((customer) => customer as JsonObject);

const vehicleArbitrary: fc.Arbitrary<JsonObject> = fc
  .record(
    {
      role: fc.constantFrom('new', 'tradeIn', 'other'),
      numberPlate: fc.stringMatching(/^[A-Z]{2}[0-9]{5}$/),
      brand: textUpTo(30),
      model: textUpTo(30),
      year: fc.oneof(fc.integer({ min: 1950, max: 2027 }), fc.constantFrom('2009', '2021')),
    },
    { requiredKeys: ['role'] },
  )
  .map((vehicle) => vehicle as JsonObject);

const paymentRequestedData: fc.Arbitrary<JsonObject> = fc
  .record({
    orderNumber: textUpTo(40),
    customer: customerArbitrary,
    serviceAdvisorEmail: fc.option(email, { nil: null }),
    vehicles: fc.array(vehicleArbitrary, { maxLength: 3 }),
    currency: fc.constantFrom('NOK', 'SEK', 'DKK', 'EUR'),
    lines: fc.array(lineArbitrary, { minLength: 1, maxLength: 4 }),
    dueInDays: fc.integer({ min: 1, max: 60 }),
    plan: fc.option(
      fc.record({
        count: fc.integer({ min: 1, max: 6 }),
        firstInDays: fc.integer({ min: 1, max: 30 }),
        intervalMonths: fc.integer({ min: 1, max: 3 }),
      }),
      { nil: undefined },
    ),
    sendPaymentLink: fc.option(fc.boolean(), { nil: undefined }),
    invoiceNumber: fc.option(asciiWord, { nil: undefined }),
  })
  .map((data) => ({
    orderNumber: data.orderNumber,
    customer: data.customer,
    serviceAdvisorEmail: data.serviceAdvisorEmail,
    vehicles: data.vehicles,
    currency: data.currency,
    lines: data.lines,
    dueDate: isoDay(data.dueInDays),
    ...(data.plan === undefined
      ? {}
      : {
          installments: {
            count: data.plan.count,
            firstDate: isoDay(data.plan.firstInDays),
            intervalMonths: data.plan.intervalMonths,
          },
        }),
    ...(data.sendPaymentLink === undefined ? {} : { sendPaymentLink: data.sendPaymentLink }),
    ...(data.invoiceNumber === undefined ? {} : { invoiceNumber: data.invoiceNumber }),
  }));

const refLike = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9-]{0,15}$/);

/** Valid data of every type (the other types only as a base for broken events). */
const DATA: Record<OrderEventType, fc.Arbitrary<JsonObject>> = {
  'order.payment_requested': paymentRequestedData,
  'order.cancelled': fc.record({ reason: textUpTo(80) }, { requiredKeys: [] }),
  'order.refund_requested': fc.record({
    refundId: refLike,
    amountGross: fc.constant('125.00'),
    amountNet: fc.constant('100.00'),
    currency: fc.constant('NOK'),
  }),
  'order.installment_added': fc.record({
    installmentRef: refLike,
    date: fc.integer({ min: 30, max: 300 }).map(isoDay),
    amount: fc.constant('300.00'),
  }),
  'order.installment_changed': fc.record({
    installmentRef: refLike,
    date: fc.integer({ min: 30, max: 300 }).map(isoDay),
  }),
  'order.installment_removed': fc.record({ installmentRef: refLike }),
  'order.marked_paid': fc.record({ note: textUpTo(80) }, { requiredKeys: [] }),
  'order.payment_resend_requested': fc.record({
    paymentMethodId: fc.constant('000000000000000000000001'),
  }),
  'order.document_attached': fc.record({
    documentRef: refLike,
    fileName: fc.constant('invoice.pdf'),
    contentType: fc.constant('application/pdf'),
    contentBase64: fc.constant(Buffer.from('%PDF-1.7 generated').toString('base64')),
  }),
  'order.document_removed': fc.record({ documentRef: refLike }),
  'order.terminal_receipt_requested': fc.record(
    { terminalId: fc.constant('terminal-1') },
    { requiredKeys: [] },
  ),
};

const occurredAt: fc.Arbitrary<string> = fc
  .tuple(
    fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z') }),
    fc.constantFrom('Z', '+01:00', '-05:30'),
  )
  .map(([date, zone]) => {
    const iso = Number.isNaN(date.getTime()) ? '2026-11-21T10:00:00.000Z' : date.toISOString();
    return zone === 'Z' ? iso : `${iso.slice(0, -1)}${zone}`;
  });

interface BaseEvent {
  readonly type: OrderEventType;
  readonly occurredAt: string;
  readonly withOrganization: boolean;
  readonly data: JsonObject;
}

const baseOf = (type: OrderEventType): fc.Arbitrary<BaseEvent> =>
  fc.record({
    type: fc.constant(type),
    occurredAt,
    withOrganization: fc.boolean(),
    data: DATA[type],
  });

/** Mostly payment requests (the richest data), every other type too. */
const anyBase: fc.Arbitrary<BaseEvent> = fc.oneof(
  { weight: 10, arbitrary: baseOf('order.payment_requested') },
  ...ORDER_EVENT_TYPES.filter((type) => type !== 'order.payment_requested').map((type) => ({
    weight: 1,
    arbitrary: baseOf(type),
  })),
);

function envelopeOf(base: BaseEvent, ids: CaseIds, orderId = ids.orderId): JsonObject {
  return {
    eventId: ids.eventId,
    type: base.type,
    occurredAt: base.occurredAt,
    ...(base.withOrganization ? { organizationId: 'org-1' } : {}),
    orderId,
    data: structuredClone(base.data),
  };
}

// ------------------------------------------------------------------- encoding helpers

/** Text spliced in raw where a marker string stands (JSON that JSON.stringify cannot write). */
interface RawPatch {
  readonly marker: string;
  readonly bytes: Buffer;
}

let markerCounter = 0;
function rawValue(bytes: Buffer | string): { marker: string; patch: RawPatch } {
  markerCounter += 1;
  const marker = `@@raw-${markerCounter}@@`;
  return {
    marker,
    patch: { marker, bytes: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes },
  };
}

function encode(document: Json, patches: readonly RawPatch[] = []): Buffer {
  let parts: (string | Buffer)[] = [JSON.stringify(document)];
  for (const patch of patches) {
    const quoted = JSON.stringify(patch.marker);
    parts = parts.flatMap((part) => {
      if (typeof part !== 'string' || !part.includes(quoted)) return [part];
      const pieces = part.split(quoted);
      return pieces.flatMap((piece, i) => (i === 0 ? [piece] : [patch.bytes, piece]));
    });
  }
  return Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
}

type Path = readonly (string | number)[];

function setAt(root: JsonObject, path: Path, value: Json | undefined): void {
  let node: Json = root;
  for (const [i, segment] of path.entries()) {
    const last = i === path.length - 1;
    if (typeof segment === 'number') {
      if (!Array.isArray(node)) return;
      if (last) {
        if (value === undefined) node.splice(segment, 1);
        else node[segment] = value;
        return;
      }
      node[segment] ??= typeof path[i + 1] === 'number' ? [] : {};
      node = node[segment] ?? null;
    } else {
      if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
      if (last) {
        if (value === undefined) delete node[segment];
        else node[segment] = value;
        return;
      }
      const child: Json | undefined = node[segment];
      if (child === undefined || child === null || typeof child !== 'object') {
        node[segment] = typeof path[i + 1] === 'number' ? [] : {};
      }
      node = node[segment] ?? null;
    }
  }
}

function getAt(root: JsonObject, path: Path): Json | undefined {
  let node: Json | undefined = root;
  for (const segment of path) {
    if (node === null || node === undefined || typeof node !== 'object') return undefined;
    node = Array.isArray(node)
      ? typeof segment === 'number'
        ? node[segment]
        : undefined
      : typeof segment === 'string'
        ? node[segment]
        : undefined;
  }
  return node;
}

const pathText = (path: Path): string => path.join('.');

/** A short printable view of a value for a case's detail line. */
export function preview(value: unknown, max = 60): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value);
  else if (value === undefined) text = 'undefined';
  else {
    try {
      text = JSON.stringify(value) ?? typeof value;
    } catch {
      text = typeof value;
    }
  }
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length} chars)`;
}

/** A case built on the ids of its position: keyed by its orderId unless told otherwise. */
function caseOf(
  ids: CaseIds,
  base: BaseEvent,
  kind: string,
  detail: string,
  value: Buffer | null,
  expect: ErpExpectation,
  options: { key?: Buffer | null; headers?: Record<string, Buffer> } = {},
): ErpCase {
  const orderId = ids.orderId;
  return {
    index: ids.index,
    kind,
    detail,
    key: options.key === undefined ? Buffer.from(orderId, 'utf8') : options.key,
    value,
    headers: options.headers,
    orderId,
    eventId: ids.eventId,
    type: base.type,
    expect,
  };
}

const deadLetter = (reasons: readonly DeadLetterReason[]): ErpExpectation => ({
  outcome: 'dead_letter',
  reasons,
});

// ------------------------------------------------------------------------ the fields

type Shape =
  | 'uuid'
  | 'eventType'
  | 'datetime'
  | 'text'
  | 'date'
  | 'currency'
  | 'email'
  | 'url'
  | 'enum'
  | 'amount'
  | 'positiveAmount'
  | 'nonNegativeAmount'
  | 'percent'
  | 'int'
  | 'year'
  | 'bool'
  | 'object'
  | 'array'
  | 'plan';

interface Field {
  readonly path: Path;
  readonly shape: Shape;
  /** Must be present. */
  readonly required?: boolean;
  /** null is allowed. */
  readonly nullable?: boolean;
  /** Longest allowed string, in characters (code points, as zod counts). */
  readonly max?: number;
  /** '' is refused (min length 1, or the shape's pattern). */
  readonly nonEmpty?: boolean;
  /** Trimmed before the length check: only spaces counts as empty. */
  readonly trimmed?: boolean;
  /** Integer bounds (int shape). */
  readonly min?: number;
  readonly intMax?: number;
}

const ENVELOPE: readonly Field[] = [
  { path: ['eventId'], shape: 'uuid', required: true, nonEmpty: true },
  { path: ['type'], shape: 'eventType', required: true, nonEmpty: true },
  { path: ['occurredAt'], shape: 'datetime', required: true, nonEmpty: true },
  { path: ['organizationId'], shape: 'text', nullable: true, max: 100, nonEmpty: true },
  { path: ['orderId'], shape: 'text', required: true, max: 200, nonEmpty: true, trimmed: true },
  { path: ['data'], shape: 'object', required: true },
];

const lineFields = (prefix: Path, withDiscount: boolean): Field[] => [
  { path: [...prefix, 'description'], shape: 'text', required: true, max: 500 },
  { path: [...prefix, 'quantity'], shape: 'positiveAmount', required: true },
  { path: [...prefix, 'unitPriceNet'], shape: 'amount', required: true },
  { path: [...prefix, 'taxRate'], shape: 'percent', required: true },
  ...(withDiscount
    ? [
        { path: [...prefix, 'discountRate'], shape: 'percent' as const },
        { path: [...prefix, 'lineType'], shape: 'enum' as const },
      ]
    : []),
];

const D = 'data';
const DATA_FIELDS: Record<OrderEventType, readonly Field[]> = {
  'order.payment_requested': [
    {
      path: [D, 'orderNumber'],
      shape: 'text',
      required: true,
      max: 100,
      nonEmpty: true,
      trimmed: true,
    },
    { path: [D, 'customer'], shape: 'object', required: true },
    { path: [D, 'customer', 'type'], shape: 'enum' },
    { path: [D, 'customer', 'firstName'], shape: 'text', max: 200 },
    { path: [D, 'customer', 'lastName'], shape: 'text', max: 200 },
    { path: [D, 'customer', 'companyName'], shape: 'text', max: 200 },
    { path: [D, 'customer', 'email'], shape: 'email', nonEmpty: true },
    { path: [D, 'customer', 'phone'], shape: 'object' },
    { path: [D, 'customer', 'phone', 'number'], shape: 'text', required: true, max: 32 },
    { path: [D, 'customer', 'customerNumber'], shape: 'text', max: 100 },
    { path: [D, 'customer', 'billingAddress'], shape: 'object' },
    { path: [D, 'customer', 'billingAddress', 'postalCode'], shape: 'text', max: 20 },
    { path: [D, 'customer', 'billingAddress', 'countryCode'], shape: 'text', max: 3 },
    { path: [D, 'serviceAdvisorEmail'], shape: 'email', nullable: true, nonEmpty: true },
    { path: [D, 'vehicles'], shape: 'array' },
    { path: [D, 'vehicles', 0, 'role'], shape: 'enum', required: true, nonEmpty: true },
    { path: [D, 'vehicles', 0, 'year'], shape: 'year' },
    { path: [D, 'vehicles', 0, 'vin'], shape: 'text', max: 17 },
    { path: [D, 'currency'], shape: 'currency', required: true, nonEmpty: true },
    { path: [D, 'lines'], shape: 'array', required: true },
    ...lineFields([D, 'lines', 0], true),
    { path: [D, 'dueDate'], shape: 'date', required: true, nonEmpty: true },
    { path: [D, 'installments'], shape: 'plan' },
    { path: [D, 'installments', 'firstDate'], shape: 'date', required: true, nonEmpty: true },
    { path: [D, 'installments', 'count'], shape: 'int', required: true, min: 1, intMax: 120 },
    { path: [D, 'paymentMethodId'], shape: 'text', nullable: true, nonEmpty: true },
    { path: [D, 'invoiceNumber'], shape: 'text', max: 100 },
    { path: [D, 'invoiceComments'], shape: 'text', nullable: true, max: 2000 },
    { path: [D, 'sendPaymentLink'], shape: 'bool' },
    { path: [D, 'redirect', 'successUrl'], shape: 'url', nonEmpty: true },
    { path: [D, 'sharebox', 'plateNumber'], shape: 'text', required: true, max: 20 },
  ],
  'order.cancelled': [{ path: [D, 'reason'], shape: 'text', max: 1000 }],
  'order.refund_requested': [
    {
      path: [D, 'refundId'],
      shape: 'text',
      required: true,
      max: 200,
      nonEmpty: true,
      trimmed: true,
    },
    { path: [D, 'amountGross'], shape: 'positiveAmount', required: true },
    { path: [D, 'amountNet'], shape: 'nonNegativeAmount', required: true },
    { path: [D, 'currency'], shape: 'currency', required: true, nonEmpty: true },
    { path: [D, 'lines'], shape: 'array' },
    ...lineFields([D, 'lines', 0], false),
  ],
  'order.installment_added': [
    {
      path: [D, 'installmentRef'],
      shape: 'text',
      required: true,
      max: 200,
      nonEmpty: true,
      trimmed: true,
    },
    { path: [D, 'date'], shape: 'date', required: true, nonEmpty: true },
    { path: [D, 'amount'], shape: 'positiveAmount', required: true },
  ],
  'order.installment_changed': [
    {
      path: [D, 'installmentRef'],
      shape: 'text',
      required: true,
      max: 200,
      nonEmpty: true,
      trimmed: true,
    },
    { path: [D, 'date'], shape: 'date', nonEmpty: true },
    { path: [D, 'amount'], shape: 'positiveAmount' },
  ],
  'order.installment_removed': [
    {
      path: [D, 'installmentRef'],
      shape: 'text',
      required: true,
      max: 200,
      nonEmpty: true,
      trimmed: true,
    },
  ],
  'order.marked_paid': [{ path: [D, 'note'], shape: 'text', max: 1000 }],
  'order.payment_resend_requested': [
    { path: [D, 'paymentMethodId'], shape: 'text', required: true, nonEmpty: true },
    { path: [D, 'terminalId'], shape: 'text', nonEmpty: true },
  ],
  'order.document_attached': [
    {
      path: [D, 'documentRef'],
      shape: 'text',
      required: true,
      max: 200,
      nonEmpty: true,
      trimmed: true,
    },
    {
      path: [D, 'fileName'],
      shape: 'text',
      required: true,
      max: 255,
      nonEmpty: true,
      trimmed: true,
    },
    {
      path: [D, 'contentType'],
      shape: 'text',
      required: true,
      max: 255,
      nonEmpty: true,
      trimmed: true,
    },
    { path: [D, 'contentBase64'], shape: 'text', required: true, nonEmpty: true },
  ],
  'order.document_removed': [
    {
      path: [D, 'documentRef'],
      shape: 'text',
      required: true,
      max: 200,
      nonEmpty: true,
      trimmed: true,
    },
  ],
  'order.terminal_receipt_requested': [{ path: [D, 'terminalId'], shape: 'text', nonEmpty: true }],
};

const fieldsOf = (type: OrderEventType): readonly Field[] => [...ENVELOPE, ...DATA_FIELDS[type]];

// ----------------------------------------------------------------------- wrong values

const STRING_SHAPES: ReadonlySet<Shape> = new Set([
  'uuid',
  'eventType',
  'datetime',
  'text',
  'date',
  'currency',
  'email',
  'url',
  'enum',
]);
const AMOUNT_SHAPES: ReadonlySet<Shape> = new Set([
  'amount',
  'positiveAmount',
  'nonNegativeAmount',
  'percent',
]);

const smallObject: fc.Arbitrary<Json> = fc
  .dictionary(asciiWord, fc.oneof(fc.integer(), asciiWord), { minKeys: 0, maxKeys: 3 })
  .map((value) => value as Json);
const smallArray: fc.Arbitrary<Json> = fc.array(fc.oneof(fc.integer(), asciiWord), {
  maxLength: 3,
});

/** A value of another JSON type than the field's (null only where null is refused). */
function wrongTypeValue(field: Field): fc.Arbitrary<Json> {
  const options: fc.Arbitrary<Json>[] = [];
  const isString = STRING_SHAPES.has(field.shape);
  const isAmount = AMOUNT_SHAPES.has(field.shape);
  if (!isString && !isAmount && field.shape !== 'year') options.push(asciiWord);
  if (isString || field.shape === 'bool' || field.shape === 'object' || field.shape === 'array') {
    options.push(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
  }
  if (field.shape !== 'bool') options.push(fc.boolean());
  if (field.shape !== 'object' && field.shape !== 'plan') options.push(smallObject);
  if (field.shape !== 'array' && field.shape !== 'plan') options.push(smallArray);
  if (!field.nullable) options.push(fc.constant(null));
  return fc.oneof(...options);
}

/** Strings that are no decimal number ("1249.50"), whatever zod's trim leaves. */
const nonDecimal: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    '   ',
    'abc',
    '1,50',
    '1.2.3',
    'NaN',
    'Infinity',
    '-',
    '.5',
    '5.',
    '1e30',
    '1E+5',
    '0x10',
    '12 34',
    '1_000',
    '١٢٣',
    '½',
    '$100',
    '100 NOK',
  ),
  fc.string({ maxLength: 12 }).filter((text) => !/^\s*[+-]?\d+(\.\d+)?\s*$/.test(text)),
);

/** Impossible calendar dates: day past the month's end, month 0 or 13+, day 0. */
const impossibleDate: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '2026-02-30',
    '2026-02-29',
    '2025-02-29',
    '2100-02-29',
    '2026-04-31',
    '2026-06-31',
    '2026-09-31',
    '2026-11-31',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
    '2026-01-32',
    '0000-00-00',
  ),
  fc
    .record({
      year: fc.integer({ min: 1900, max: 2200 }),
      month: fc.integer({ min: 1, max: 12 }),
      over: fc.integer({ min: 1, max: 3 }),
    })
    .map(({ year, month, over }) => {
      const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
      const day = days + over;
      return `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
    }),
);

/** Strings that are no YYYY-MM-DD date at all. */
const malformedDate: fc.Arbitrary<string> = fc.constantFrom(
  '2026-1-5',
  '26-01-05',
  '2026/01/05',
  '20260105',
  '2026-01-05T00:00:00Z',
  ' 2026-01-05',
  '2026-01-05 ',
  'tomorrow',
  '',
  '05.01.2026',
  '2026-W02-1',
  '+02026-01-05',
);

const badDatetime: fc.Arbitrary<string> = fc.oneof(
  impossibleDate.map((date) => `${date}T10:00:00Z`),
  fc.constantFrom(
    '2026-11-21T24:00:01Z',
    '2026-11-21T10:60:00Z',
    '2026-11-21T10:00:61Z',
    '2026-11-21 10:00:00Z',
    '2026-11-21T10:00:00',
    '2026-11-21',
    '10:00:00Z',
    'yesterday',
    '',
    'Sat, 21 Nov 2026 10:00:00 GMT',
    '1763719200000',
  ),
);

/** A value of the right JSON type that breaks the field's own rule. */
function ruleBreakingValue(field: Field): fc.Arbitrary<Json> | undefined {
  switch (field.shape) {
    case 'uuid':
      return fc.constantFrom(
        'not-a-uuid',
        '6f1c',
        '00000000-0000-0000-0000-00000000000g',
        '6f1c7a9e-1b2c-4d3e-8f40-5a6b7c8d9e0f0',
        '{6f1c7a9e-1b2c-4d3e-8f40-5a6b7c8d9e0f}',
      );
    case 'eventType':
      return fc.oneof(
        fc.constantFrom(
          'order.unknown',
          'ORDER.PAYMENT_REQUESTED',
          'order.payment-requested',
          'order.payment_requested ',
          ' order.cancelled',
          'payment_requested',
          'order.',
          '__proto__',
        ),
        asciiWord.map((word) => `order.${word}_x`),
      );
    case 'datetime':
      return badDatetime;
    case 'date':
      return fc.oneof(impossibleDate, malformedDate);
    case 'currency':
      return fc.constantFrom('nok', 'NOKK', 'NO', 'ABC', 'ZZZ', 'N0K', 'EURO', 'Nok', '€');
    case 'email':
      return fc.constantFrom(
        'not-an-email',
        'a@',
        '@b.example',
        'a b@c.example',
        'a@b',
        'a@@b.example',
      );
    case 'url':
      return fc.constantFrom('not a url', 'http//x', '://x', 'www.example.com', '/relative/path');
    case 'enum':
      return fc.constantFrom('alien', 'Person', 'NEW', 'boat', 'discount', 'tradein', ' new');
    case 'amount':
      return nonDecimal;
    case 'positiveAmount':
      return fc.oneof(
        nonDecimal,
        fc.constantFrom<Json>(0, -1, -0.01, '0', '0.00', '-0.01', '-1000', -1e30),
      );
    case 'nonNegativeAmount':
      return fc.oneof(nonDecimal, fc.constantFrom<Json>(-0.01, '-1', -1e30));
    case 'percent':
      return fc.oneof(nonDecimal, fc.constantFrom<Json>(-1, 100.01, 101, '150', -0.5, 1e30));
    case 'int':
      return fc.constantFrom<Json>(
        field.min === undefined ? 1.5 : field.min - 1,
        field.intMax === undefined ? 2.5 : field.intMax + 1,
        1.5,
        1e30,
      );
    case 'year':
      return fc.constantFrom<Json>('20099', '2009-01', 2009.5, '19999');
    case 'array':
      // Only the payment's lines have a minimum (one); other arrays may be empty.
      return field.required === true && field.path.at(-1) === 'lines'
        ? fc.constant<Json>([])
        : undefined;
    case 'plan':
      return fc.constantFrom<Json>([], { count: 0, firstDate: isoDay(5), intervalMonths: 1 });
    case 'text':
    case 'bool':
    case 'object':
      return undefined;
  }
}

// ------------------------------------------------------------------------ mutations

interface Mutated {
  readonly detail: string;
  /** The JSON document to encode, or `raw`: the value's bytes as they are. */
  readonly document?: Json;
  readonly raw?: Buffer;
  readonly patches?: readonly RawPatch[];
  readonly key?: Buffer | null;
  readonly reasons: readonly DeadLetterReason[];
}

/** A change of a valid envelope that must get it dead-lettered. */
type Mutation = (envelope: JsonObject, base: BaseEvent) => Mutated;

interface MutationFamily {
  readonly kind: string;
  readonly weight: number;
  /** Only events of these types (default: any type). */
  readonly only?: readonly OrderEventType[];
  /** Given the base event, the mutations that apply to it. */
  readonly of: (base: BaseEvent) => fc.Arbitrary<Mutation> | undefined;
}

/** One of the arbitraries that apply; undefined when none does. */
function oneOfDefined<T>(
  ...arbitraries: (fc.Arbitrary<T> | undefined)[]
): fc.Arbitrary<T> | undefined {
  const defined = arbitraries.filter(
    (arbitrary): arbitrary is fc.Arbitrary<T> => arbitrary !== undefined,
  );
  return defined.length === 0 ? undefined : fc.oneof(...defined);
}

const pick = <T>(items: readonly T[]): fc.Arbitrary<T> | undefined =>
  items.length === 0 ? undefined : fc.constantFrom(...items);

function fieldMutation(
  fields: readonly Field[],
  value: (field: Field) => fc.Arbitrary<Json> | undefined,
  reasons: readonly DeadLetterReason[] = INVALID_EVENT,
): fc.Arbitrary<Mutation> | undefined {
  const usable = fields.filter((field) => value(field) !== undefined);
  const chosen = pick(usable);
  if (chosen === undefined) return undefined;
  return chosen.chain((field) =>
    (value(field) ?? fc.constant(null)).map((wrong): Mutation => (envelope) => {
      setAt(envelope, field.path, wrong);
      return {
        detail: `${pathText(field.path)} := ${preview(wrong)}`,
        document: envelope,
        reasons,
      };
    }),
  );
}

/** `length` characters: `prefix`, then hex digits of a hash chain (no repetition to compress). */
function noise(prefix: string, length: number): string {
  let text = prefix;
  let block = prefix;
  while (text.length < length) {
    block = createHash('sha256').update(block).digest('hex');
    text += block;
  }
  return text.slice(0, length);
}

/** 2 MiB of UTF-8 made of `unit` (one code point). */
const hugeString = (unit: string): string =>
  unit.repeat(Math.floor(HUGE_STRING_BYTES / Buffer.byteLength(unit)));

/** Deeply nested JSON text: {"a":{"a":…}} or [[[…]]]. */
function nestedText(depth: number, style: 'object' | 'array'): string {
  return style === 'object'
    ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
    : `${'['.repeat(depth)}1${']'.repeat(depth)}`;
}

const INVALID_UTF8: readonly (readonly number[])[] = [
  [0xff],
  [0xfe, 0xff],
  [0xc3, 0x28],
  [0xe2, 0x28, 0xa1],
  [0xe2, 0x82],
  [0xf0, 0x28, 0x8c, 0xbc],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0x80],
  [0xf4, 0x90, 0x80, 0x80],
];

const stringFieldsOf = (type: OrderEventType): Field[] =>
  fieldsOf(type).filter((field) => STRING_SHAPES.has(field.shape) || field.shape === 'amount');

/** Well-formed payment requests that cannot be collected: totals ≤ 0 or beyond any use. */
const unusableAmounts: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constantFrom<Json>(0, '0.00', -1, '-100.00', -0.01).map((price): Mutation => (envelope) => {
    forEachLine(envelope, (line) => {
      line.unitPriceNet = price;
    });
    return {
      detail: `every line's unitPriceNet := ${preview(price)}`,
      document: envelope,
      reasons: UNUSABLE,
    };
  }),
  fc.constant<Mutation>((envelope) => {
    forEachLine(envelope, (line) => {
      line.discountRate = 100;
    });
    return { detail: "every line's discountRate := 100", document: envelope, reasons: UNUSABLE };
  }),
  fc
    .tuple(
      fc.constantFrom('quantity', 'unitPriceNet'),
      fc.constantFrom(
        '1e30',
        '1.7976931348623157e308',
        `"1${'0'.repeat(40)}.00"`,
        '1e21',
        '5e-324',
        '1e-7',
        '123456789012345678901234567890',
      ),
    )
    .map(([name, literal]): Mutation => (envelope) => {
      // As JSON text: a 30-digit integer is not a JS number literal without loss.
      const { marker, patch } = rawValue(literal);
      setAt(envelope, [D, 'lines', 0, name], marker);
      return {
        detail: `data.lines.0.${name} := ${literal}`,
        document: envelope,
        patches: [patch],
        reasons: UNUSABLE,
      };
    }),
  fc
    .constantFrom<Json>('0.01', 1e30, '99999999999999999999.99')
    .map((amount): Mutation => (envelope) => {
      setAt(envelope, [D, 'installments'], [{ date: isoDay(20), amount }]);
      return {
        detail: `one installment of ${preview(amount)} (not the gross total)`,
        document: envelope,
        reasons: UNUSABLE,
      };
    }),
);

function forEachLine(envelope: JsonObject, visit: (line: JsonObject) => void): void {
  const lines = getAt(envelope, [D, 'lines']);
  if (!Array.isArray(lines)) return;
  for (const line of lines) {
    if (line !== null && typeof line === 'object' && !Array.isArray(line)) visit(line);
  }
}

const FAMILIES: readonly MutationFamily[] = [
  {
    kind: 'wrong_type',
    weight: 160,
    of: (base) => fieldMutation(fieldsOf(base.type), wrongTypeValue),
  },
  {
    kind: 'missing_field',
    weight: 70,
    of: (base) =>
      pick(fieldsOf(base.type).filter((field) => field.required === true))?.map(
        (field): Mutation =>
          (envelope) => {
            // An absent optional parent is made present, without the field.
            setAt(envelope, field.path, null);
            setAt(envelope, field.path, undefined);
            return {
              detail: `${pathText(field.path)} missing`,
              document: envelope,
              reasons: INVALID_EVENT,
            };
          },
      ),
  },
  {
    kind: 'empty_or_null',
    weight: 80,
    of: (base) => {
      const fields = fieldsOf(base.type);
      return oneOfDefined(
        fieldMutation(
          fields.filter((field) => field.nonEmpty === true),
          (field) =>
            fc.constantFrom<Json>(
              '',
              ...(field.trimmed === true || field.shape !== 'text' ? ['   ', '\t\n'] : []),
            ),
        ),
        fieldMutation(
          fields.filter((field) => field.required === true && field.nullable !== true),
          () => fc.constant(null),
        ),
        base.type === 'order.payment_requested' || base.type === 'order.refund_requested'
          ? fc.constant<Mutation>((envelope) => {
              envelope.data = {};
              return { detail: 'data := {}', document: envelope, reasons: INVALID_EVENT };
            })
          : undefined,
      );
    },
  },
  {
    kind: 'bad_date',
    weight: 70,
    of: (base) =>
      fieldMutation(
        fieldsOf(base.type).filter((field) => field.shape === 'date' || field.shape === 'datetime'),
        (field) => (field.shape === 'date' ? fc.oneof(impossibleDate, malformedDate) : badDatetime),
      ),
  },
  {
    kind: 'rule_broken',
    weight: 90,
    of: (base) => fieldMutation(fieldsOf(base.type), ruleBreakingValue),
  },
  {
    kind: 'bad_amount',
    weight: 80,
    only: [
      'order.payment_requested',
      'order.refund_requested',
      'order.installment_added',
      'order.installment_changed',
    ],
    of: (base) => {
      const amounts = fieldsOf(base.type).filter((field) => AMOUNT_SHAPES.has(field.shape));
      const schemaBreaking = fieldMutation(amounts, ruleBreakingValue);
      const raw = pick(amounts)?.chain((field) =>
        fc.constantFrom('1e400', '-1e400').map((literal): Mutation => (envelope) => {
          const { marker, patch } = rawValue(literal);
          setAt(envelope, field.path, marker);
          return {
            detail: `${pathText(field.path)} := ${literal} (JSON number beyond double)`,
            document: envelope,
            patches: [patch],
            reasons: INVALID_EVENT,
          };
        }),
      );
      return oneOfDefined(
        schemaBreaking,
        raw,
        base.type === 'order.payment_requested' ? unusableAmounts : undefined,
      );
    },
  },
  {
    kind: 'too_long',
    weight: 40,
    of: (base) =>
      pick(fieldsOf(base.type).filter((field) => field.max !== undefined))?.chain((field) =>
        fc
          .tuple(fc.integer({ min: 1, max: 40 }), fc.constantFrom('x', 'ø', '€', '𝄞'))
          .map(([over, unit]): Mutation => (envelope) => {
            // zod counts characters (code points), not UTF-16 units.
            const characters = (field.max ?? 0) + over;
            setAt(envelope, field.path, unit.repeat(characters));
            return {
              detail: `${pathText(field.path)} := ${characters} × ${JSON.stringify(unit)} (max ${field.max})`,
              document: envelope,
              reasons: INVALID_EVENT,
            };
          }),
      ),
  },
  {
    kind: 'huge_string',
    weight: 2,
    of: (base) =>
      pick(
        fieldsOf(base.type).filter(
          (field) =>
            field.max !== undefined || field.shape === 'uuid' || field.shape === 'eventType',
        ),
      )?.chain((field) =>
        fc.constantFrom('x', 'æ', '😀').map((unit): Mutation => (envelope) => {
          setAt(envelope, field.path, hugeString(unit));
          return {
            detail: `${pathText(field.path)} := 2 MiB of ${JSON.stringify(unit)}`,
            document: envelope,
            reasons: INVALID_EVENT,
          };
        }),
      ),
  },
  {
    kind: 'deep_nesting',
    weight: 12,
    of: (base) =>
      fc
        .tuple(
          fc.option(pick(fieldsOf(base.type)) ?? fc.constant(ENVELOPE[0] as Field), {
            freq: 5,
            nil: undefined,
          }),
          fc.constantFrom<'object' | 'array'>('object', 'array'),
        )
        .map(([field, preferred]): Mutation => (envelope) => {
          // Objects nested in an object-typed field would be unknown members, which the
          // contract lets through: there the nesting is of arrays.
          const style = field?.shape === 'object' ? 'array' : preferred;
          const { marker, patch } = rawValue(nestedText(NESTING_DEPTH, style));
          if (field === undefined) {
            return {
              detail: `the value is ${style}s nested ${NESTING_DEPTH} deep`,
              raw: patch.bytes,
              reasons: INVALID_EVENT,
            };
          }
          setAt(envelope, field.path, marker);
          return {
            detail: `${pathText(field.path)} := ${style}s nested ${NESTING_DEPTH} deep`,
            document: envelope,
            patches: [patch],
            reasons: INVALID_EVENT,
          };
        }),
  },
  {
    kind: 'invalid_utf8',
    weight: 60,
    of: (base) =>
      fc
        .tuple(
          pick(stringFieldsOf(base.type)) ?? fc.constant(ENVELOPE[0] as Field),
          pick(INVALID_UTF8) ?? fc.constant([0xff]),
        )
        .map(([field, bytes]): Mutation => (envelope) => {
          const { marker, patch } = rawValue(
            Buffer.concat([Buffer.from('"ab'), Buffer.from(bytes), Buffer.from('cd"')]),
          );
          setAt(envelope, field.path, marker);
          return {
            detail: `${pathText(field.path)} holds bytes ${Buffer.from(bytes).toString('hex')}`,
            document: envelope,
            patches: [patch],
            reasons: INVALID_JSON,
          };
        }),
  },
  {
    kind: 'not_json',
    weight: 60,
    of: () =>
      fc.oneof(
        fc
          .constantFrom(
            'not json',
            '{',
            '}',
            "{'eventId': 1}",
            '{"eventId":1,}',
            '[1,2,]',
            'NaN',
            'undefined',
            '<event/>',
            '{"a":1} {"b":2}',
            '{"a":1}x',
            '// comment\n{}',
            '{"a":01}',
            '{"a":"\\x41"}',
            '{"a":"line\nbreak"}',
            '\u0000',
            '   ',
            '\ufeff\ufeff{}',
          )
          .map((text): Mutation => () => ({
            detail: `the value is ${preview(text)}`,
            raw: Buffer.from(text),
            reasons: INVALID_JSON,
          })),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map((text): Mutation => () => ({
          detail: `the value is ${preview(text)}`,
          raw: Buffer.from(text),
          reasons: parsesAsJson(text) ? INVALID_EVENT : INVALID_JSON,
        })),
        fc.integer({ min: 1, max: 2_000 }).map((cut): Mutation => (envelope) => {
          const whole = Buffer.from(JSON.stringify(envelope));
          const prefix = whole.subarray(0, Math.min(cut, whole.length - 1));
          return {
            detail: `the value is the first ${prefix.length} of ${whole.length} bytes of an event`,
            raw: prefix,
            reasons: INVALID_JSON,
          };
        }),
        fc.constant<Mutation>((envelope) => {
          const utf16 = Buffer.from(JSON.stringify(envelope), 'utf16le');
          return {
            detail: 'the event in UTF-16LE',
            raw: utf16,
            reasons: INVALID_JSON,
          };
        }),
      ),
  },
  {
    kind: 'json_not_object',
    weight: 30,
    of: () =>
      fc
        .oneof(
          fc.constantFrom<Json>(null, true, false, 0, -1, 1e30, '', 'order', []),
          fc
            .jsonValue({ maxDepth: 2 })
            .filter((value) => typeof value !== 'object' || value === null || Array.isArray(value))
            .map((value) => value as Json),
        )
        .chain((value) =>
          fc.boolean().map(
            (wrapValid): Mutation =>
              (envelope) =>
                wrapValid
                  ? { detail: 'the value is [event]', document: [envelope], reasons: INVALID_EVENT }
                  : {
                      detail: `the value is ${preview(value)}`,
                      document: value,
                      reasons: INVALID_EVENT,
                    },
          ),
        ),
  },
  {
    kind: 'duplicate_json_key',
    weight: 15,
    of: () =>
      pick(ENVELOPE.filter((field) => field.path[0] !== 'organizationId'))?.chain((field) =>
        wrongTypeValue(field).map((wrong): Mutation => (envelope) => {
          const name = String(field.path[0]);
          return {
            detail: `"${name}" twice, the last ${preview(wrong)}`,
            raw: Buffer.from(
              `${JSON.stringify(envelope).slice(0, -1)},${JSON.stringify(name)}:${JSON.stringify(wrong)}}`,
            ),
            reasons: INVALID_EVENT,
          };
        }),
      ),
  },
  {
    kind: 'wrong_key',
    weight: 40,
    of: () =>
      fc
        .oneof(
          fc.constantFrom<(orderId: string) => Buffer>(
            (orderId) => Buffer.from(`${orderId}x`),
            (orderId) => Buffer.from(` ${orderId}`),
            (orderId) => Buffer.from(orderId.toLowerCase()),
            () => Buffer.alloc(0),
            ...(BINARY_KEYS
              ? [
                  (orderId: string) => Buffer.concat([Buffer.from(orderId), Buffer.from([0xff])]),
                  (orderId: string) => Buffer.from(orderId, 'utf16le'),
                ]
              : []),
          ),
          asciiWord.map((word) => () => Buffer.from(word)),
          // Longer than any orderId may be, and than a Postgres index row (2,704 bytes).
          // Incompressible, so that Postgres cannot shrink it under that limit.
          fc
            .constantFrom(201, 3_000, 100_000)
            .map((length) => (orderId: string) => Buffer.from(noise(orderId, length))),
        )
        .map((keyOf): Mutation => (envelope) => {
          const key = keyOf(typeof envelope.orderId === 'string' ? envelope.orderId : '');
          return {
            detail: `Kafka key ${preview(key.toString('utf8'))} is not the orderId`,
            document: envelope,
            key,
            reasons: INVALID_EVENT,
          };
        }),
  },
  {
    kind: 'nul_character',
    weight: 25,
    of: (base) =>
      fc
        .tuple(
          fc.constantFrom<Path>(
            ['orderId'],
            ['organizationId'],
            ...(base.type === 'order.payment_requested' ? [[D, 'orderNumber']] : []),
          ),
          fc.constantFrom('\u0000', 'a\u0000', '\u0000b'),
        )
        .map(([path, nul]): Mutation => (envelope) => {
          const before = getAt(envelope, path);
          const text = `${typeof before === 'string' ? before : 'org-1'}${nul}`;
          setAt(envelope, path, text);
          return {
            detail: `${pathText(path)} := ${preview(text)}`,
            document: envelope,
            ...(path[0] === 'orderId' && BINARY_KEYS ? { key: Buffer.from(text) } : {}),
            reasons: INVALID_EVENT,
          };
        }),
  },
  {
    kind: 'unknown_organization',
    weight: 10,
    only: ['order.payment_requested'],
    of: () =>
      fc
        .constantFrom(
          'org-does-not-exist',
          'ORG-1',
          'org-日本',
          'org-ø',
          'org\u0001x',
          'org-1\t',
          'org-1 ',
          ' org-1',
        )
        .map((organizationId): Mutation => (envelope) => {
          envelope.organizationId = organizationId;
          return {
            detail: `organizationId := ${preview(organizationId)}`,
            document: envelope,
            reasons: UNUSABLE,
          };
        }),
  },
];

/** Whether the worker's decoder (UTF-8, one byte order mark dropped) and JSON.parse take it. */
function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text.replace(/^\ufeff/, ''));
    return true;
  } catch {
    return false;
  }
}

// --------------------------------------------------------------------- valid variants

/** Kafka headers nobody asked for: binary, NUL, invalid UTF-8, a garbage traceparent. */
const junkHeaders: fc.Arbitrary<Record<string, Buffer>> = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom('traceparent', 'tracestate', 'x-dlq-reason', 'content-type', 'h\u0000', ''),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
      ),
      fc.oneof(
        fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
        fc.string({ unit: 'binary', maxLength: 40 }).map((text) => Buffer.from(text)),
        fc.constantFrom(Buffer.from('00-zz-yy-01'), Buffer.from([0x00]), Buffer.from([0xc3, 0x28])),
      ),
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((entries) => Object.fromEntries(entries));

/** An extra member's value: any JSON, objects nested 5,000 deep, or a 2 MiB string. */
type ExtraValue =
  | { readonly kind: 'json'; readonly json: Json }
  | { readonly kind: 'deep' }
  | { readonly kind: 'huge' };

interface ExtraField {
  readonly path: Path;
  readonly value: ExtraValue;
}

/** Extra members the contract lets through (unknown fields are ignored). */
const extraField: fc.Arbitrary<ExtraField> = fc.record({
  path: fc.constantFrom<Path>(
    ['extra'],
    ['__proto__'],
    ['constructor'],
    [D, 'unknownField'],
    [D, 'customer', 'shoeSize'],
    [D, 'lines', 0, 'sku'],
  ),
  value: fc.oneof(
    {
      weight: 20,
      arbitrary: fc
        .jsonValue({ maxDepth: 3 })
        .map((json): ExtraValue => ({ kind: 'json', json: json as Json })),
    },
    { weight: 2, arbitrary: fc.constant<ExtraValue>({ kind: 'deep' }) },
    { weight: 1, arbitrary: fc.constant<ExtraValue>({ kind: 'huge' }) },
  ),
});

type ValidVariant =
  | { readonly kind: 'plain' }
  | { readonly kind: 'extra'; readonly extras: readonly ExtraField[] }
  | { readonly kind: 'bom' }
  | { readonly kind: 'null_key' }
  | { readonly kind: 'headers'; readonly headers: Record<string, Buffer> }
  | { readonly kind: 'odd_order_id'; readonly suffix: string }
  | { readonly kind: 'odd_occurred_at'; readonly occurredAt: string }
  | { readonly kind: 'odd_amounts'; readonly format: AmountFormat };

/** Other spellings of the same decimal amount that the contract's "decimal string" allows. */
type AmountFormat = 'plus' | 'leading_zeros' | 'spaces' | 'number' | 'many_decimals';

function respell(amount: Json, format: AmountFormat): Json {
  const text =
    typeof amount === 'number' ? amount.toFixed(2) : typeof amount === 'string' ? amount : '0';
  switch (format) {
    case 'plus':
      return `+${text}`;
    case 'leading_zeros':
      return `000${text}`;
    case 'spaces':
      return ` ${text}\t`;
    case 'number':
      return Number(text);
    case 'many_decimals':
      return `${text}000000`;
  }
}

const validVariant: fc.Arbitrary<ValidVariant> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<ValidVariant>({ kind: 'plain' }) },
  {
    weight: 4,
    arbitrary: fc
      .array(extraField, { minLength: 1, maxLength: 3 })
      .map((extras): ValidVariant => ({ kind: 'extra', extras })),
  },
  { weight: 1, arbitrary: fc.constant<ValidVariant>({ kind: 'bom' }) },
  { weight: 1, arbitrary: fc.constant<ValidVariant>({ kind: 'null_key' }) },
  {
    weight: 2,
    arbitrary: junkHeaders.map((headers): ValidVariant => ({ kind: 'headers', headers })),
  },
  {
    weight: 2,
    arbitrary: textUpTo(20)
      .filter((suffix) => suffix === suffix.trim())
      .map((suffix): ValidVariant => ({ kind: 'odd_order_id', suffix })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        '0001-01-01T00:00:00Z',
        '1970-01-01T00:00:00Z',
        '9999-12-31T23:59:59.999999999+14:00',
        '2026-11-21T10:00:00.123456789-12:00',
        '2024-02-29T23:59:59Z',
      )
      .map((at): ValidVariant => ({ kind: 'odd_occurred_at', occurredAt: at })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<AmountFormat>('plus', 'leading_zeros', 'spaces', 'number', 'many_decimals')
      .map((format): ValidVariant => ({ kind: 'odd_amounts', format })),
  },
);

function validCase(base: BaseEvent, variant: ValidVariant): CaseRecipe {
  return (ids) => {
    const orderId =
      variant.kind === 'odd_order_id' ? `${ids.orderId}-${variant.suffix}` : ids.orderId;
    const envelope = envelopeOf(base, ids, orderId);
    const patches: RawPatch[] = [];
    let detail = 'valid payment request';
    let value: Buffer;
    if (variant.kind === 'extra') {
      for (const extra of variant.extras) {
        let member: Json;
        if (extra.value.kind === 'deep') {
          const raw = rawValue(nestedText(NESTING_DEPTH, 'object'));
          patches.push(raw.patch);
          member = raw.marker;
        } else if (extra.value.kind === 'huge') member = hugeString('z');
        else member = extra.value.json;
        if (extra.path[0] === '__proto__') {
          // JSON.parse makes "__proto__" an own member; an object literal would not.
          Object.defineProperty(envelope, '__proto__', {
            value: member,
            enumerable: true,
            configurable: true,
            writable: true,
          });
        } else setAt(envelope, extra.path, member);
      }
      detail = `valid, with ${variant.extras
        .map(
          (extra) =>
            `${pathText(extra.path)} = ${extra.value.kind === 'deep' ? `${NESTING_DEPTH} deep` : extra.value.kind === 'huge' ? '2 MiB' : preview(extra.value.json, 30)}`,
        )
        .join(', ')}`;
    }
    if (variant.kind === 'odd_occurred_at') {
      envelope.occurredAt = variant.occurredAt;
      detail = `valid, occurredAt ${variant.occurredAt}`;
    }
    if (variant.kind === 'odd_amounts') {
      const lines = getAt(envelope, [D, 'lines']);
      for (const line of Array.isArray(lines) ? lines : []) {
        if (line !== null && typeof line === 'object' && !Array.isArray(line)) {
          line.unitPriceNet = respell(line.unitPriceNet ?? '0', variant.format);
          line.quantity = respell(
            line.quantity ?? '1',
            variant.format === 'many_decimals' ? 'plus' : variant.format,
          );
        }
      }
      detail = `valid, amounts spelt ${variant.format}`;
    }
    value = encode(envelope, patches);
    if (variant.kind === 'bom') {
      value = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), value]);
      detail = 'valid, with a UTF-8 byte order mark';
    }
    if (variant.kind === 'null_key') detail = 'valid, without a Kafka key';
    if (variant.kind === 'headers')
      detail = `valid, with Kafka headers ${preview(Object.keys(variant.headers))}`;
    if (variant.kind === 'odd_order_id') detail = `valid, orderId ${preview(orderId)}`;
    return {
      index: ids.index,
      kind: variant.kind === 'plain' ? 'valid' : `valid_${variant.kind}`,
      detail,
      key: variant.kind === 'null_key' ? null : Buffer.from(orderId, 'utf8'),
      value,
      headers: variant.kind === 'headers' ? variant.headers : undefined,
      orderId,
      eventId: ids.eventId,
      type: base.type,
      expect: { outcome: 'applied' },
    };
  };
}

/** A valid payment request (for the later checks: duplicates, still consuming). */
export function validPaymentRequestRecipe(): fc.Arbitrary<CaseRecipe> {
  return baseOf('order.payment_requested').map((base) => validCase(base, { kind: 'plain' }));
}

function brokenCase(
  family: MutationFamily,
  base: BaseEvent,
  mutation: Mutation,
  headers: Record<string, Buffer> | undefined,
): CaseRecipe {
  return (ids) => {
    const envelope = envelopeOf(base, ids);
    const mutated = mutation(envelope, base);
    const value = mutated.raw ?? encode(mutated.document ?? null, mutated.patches ?? []);
    return caseOf(
      ids,
      base,
      family.kind,
      mutated.detail + (headers === undefined ? '' : ' (+ junk headers)'),
      value,
      deadLetter(mutated.reasons),
      {
        ...(mutated.key === undefined ? {} : { key: mutated.key }),
        ...(headers === undefined ? {} : { headers }),
      },
    );
  };
}

/** Values no parser gets to: no value at all (a tombstone) or zero bytes. */
const absentValue: fc.Arbitrary<CaseRecipe> = fc
  .tuple(anyBase, fc.constantFrom<'null' | 'empty'>('null', 'empty'), fc.boolean())
  .map(
    ([base, what, keyless]): CaseRecipe =>
      (ids) =>
        caseOf(
          ids,
          base,
          'empty_value',
          `${what === 'null' ? 'a null value (tombstone)' : 'an empty value'}${keyless ? ', no key' : ''}`,
          what === 'null' ? null : Buffer.alloc(0),
          deadLetter(INVALID_JSON),
          keyless ? { key: null } : {},
        ),
  );

/** Every case family, weighted: about one case in eight is a valid event. */
export function erpCaseArbitrary(): fc.Arbitrary<CaseRecipe> {
  const broken = FAMILIES.map((family) => ({
    weight: family.weight,
    arbitrary: (family.only === undefined
      ? anyBase
      : fc.oneof(...family.only.map((type) => baseOf(type)))
    ).chain((base) =>
      fc
        .tuple(family.of(base) ?? unchanged, sometimesJunkHeaders)
        .map(([mutation, headers]) => brokenCase(family, base, mutation, headers)),
    ),
  }));
  return fc.oneof(
    {
      weight: 130,
      arbitrary: fc
        .tuple(baseOf('order.payment_requested'), validVariant)
        .map(([base, variant]) => validCase(base, variant)),
    },
    { weight: 20, arbitrary: absentValue },
    ...broken,
  );
}

/** One broken event in ten also carries junk Kafka headers. */
const sometimesJunkHeaders: fc.Arbitrary<Record<string, Buffer> | undefined> = fc.oneof(
  { weight: 9, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: junkHeaders },
);

/** Where a family has nothing to break in a type: the type itself is made unknown. */
const unchanged: fc.Arbitrary<Mutation> = fc.constant((envelope: JsonObject) => {
  envelope.type = 'order.not_a_type';
  return { detail: 'type := "order.not_a_type"', document: envelope, reasons: INVALID_EVENT };
});

/**
 * Events that reuse the eventId of an event that took effect, with other content: for
 * another order, for the same order with other data, or broken. The contract makes a
 * reused eventId a redelivery (CONTRACT §2: "makes redelivery harmless"), so the first two
 * must change nothing and the broken one is still dead-lettered (it is parsed first).
 */
export function reusedEventIdCases(
  applied: readonly ErpCase[],
  seed: number,
  firstIndex: number,
): ErpCase[] {
  const fresh = fc.sample(validPaymentRequestRecipe(), {
    numRuns: Math.max(1, applied.length),
    seed: seed + 1,
  });
  const cases: ErpCase[] = [];
  applied.forEach((original, i) => {
    const ids = caseIds(seed, firstIndex + i);
    const recipe = fresh[i] ?? fresh[0];
    if (recipe === undefined) return;
    const variant = i % 3;
    const orderId = variant === 1 ? original.orderId : ids.orderId;
    const made = recipe({ index: ids.index, orderId, eventId: original.eventId });
    if (variant === 2) {
      const broken = JSON.parse(made.value?.toString('utf8') ?? '{}') as JsonObject;
      setAt(broken, [D, 'currency'], undefined);
      cases.push({
        ...made,
        kind: 'reused_event_id',
        detail: `eventId of #${original.index} again, without data.currency`,
        value: Buffer.from(JSON.stringify(broken)),
        expect: deadLetter(INVALID_EVENT),
      });
      return;
    }
    cases.push({
      ...made,
      kind: 'reused_event_id',
      detail: `eventId of #${original.index} again, other data${variant === 1 ? ', same order' : ', another order'}`,
      expect: { outcome: 'duplicate', of: original.orderId },
    });
  });
  return cases;
}
