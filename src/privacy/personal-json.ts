/**
 * The scrubbing of stored JSON (docs/privacy.md): an ERP order event (a dead letter, its
 * `.dlq` copy, a replayed copy in the outbox), a status event in the outbox, or Payflow's
 * webhook body loses every value that may name or reach a person, and keeps its shape, ids,
 * amounts, dates, states and references, so that what happened and in which order can
 * still be read.
 *
 * An ALLOWLIST, not a list of personal fields: a value is kept only under a field name known
 * to hold no personal data (KEPT_FIELDS). Everything else (names, e-mail, phone, address,
 * VIN, number plate, free text, document contents, payment links, and any field the ERP or
 * Payflow sends that nobody has classified yet, also in an event that failed its schema) is
 * replaced with ERASED. Booleans and nulls carry nothing and stay. Scrubbing is idempotent:
 * scrubbing a scrubbed value changes nothing, which is how a second erase finds nothing to do.
 *
 * Pure: no I/O. personal-json.spec.ts holds every field of every ERP and status event
 * schema to one of KEPT_FIELDS or PERSONAL_FIELDS.
 */
import { DEAD_LETTER_REASONS } from '../errors/app-error.js';

/** What an erased value becomes. */
export const ERASED = '[erased]';

/**
 * Field names whose values hold no personal data, wherever they appear: envelopes, ids and
 * references, amounts and currencies, dates, statuses and types, flags, vehicle make and
 * model (without its VIN or number plate they name nobody).
 */
export const KEPT_FIELDS: ReadonlySet<string> = new Set([
  // envelopes (ERP events, status and settlement events, webhooks)
  'eventId',
  'type',
  'occurredAt',
  'organizationId',
  'orderId',
  'supersedes',
  'sourceEventId',
  'supersededBy',
  'paymentId',
  'deliveryId',
  'event',
  'change',
  'internalRef',
  // ids and references
  'id',
  'orderNumber',
  'invoiceNumber',
  // the payment's own references (business references; docs/assumptions.md)
  'paymentRef',
  'externalRef',
  'installmentRef',
  'installmentId',
  'refundId',
  'refundRef',
  'payflowRefundId',
  'documentRef',
  'documentId',
  'fileId',
  'paymentMethodId',
  'profileId',
  'paymentDepartment',
  'terminalId',
  'invoiceType',
  'eventType',
  'discardedBy',
  // money
  'currency',
  'amount',
  'amountGross',
  'amountNet',
  'grossAmount',
  'netAmount',
  'vatAmount',
  'totalGrossAmount',
  'totalNetAmount',
  'remainingAmount',
  'previousAmount',
  'size',
  'quantity',
  'unitPriceNet',
  'taxRate',
  'discountRate',
  'lineType',
  'refundType',
  // dates and plans
  'date',
  'dueDate',
  'firstDate',
  'previousDate',
  'count',
  'intervalMonths',
  'position',
  // states
  'status',
  'previousStatus',
  'providerStatus',
  'previousProviderStatus',
  'paymentStatus',
  'previousPaymentStatus',
  'numFailed',
  'source',
  // Payflow's error details: the code and the field's path, not its message
  'code',
  'loc',
  'contentType',
  'sendPaymentLink',
  'sendPaymentReminder',
  // vehicles, without VIN and number plate
  'role',
  'brand',
  'model',
  'color',
  'year',
]);

/**
 * Field names that hold personal data or free text, erased wherever they appear. Not
 * consulted by the scrubbing (anything not kept is erased); it names what the ERP and status
 * events carry, for docs/privacy.md and the spec that holds every schema field to a list.
 */
export const PERSONAL_FIELDS: ReadonlySet<string> = new Set([
  'customer',
  'firstName',
  'lastName',
  'companyName',
  'email',
  'phone',
  'countryCode',
  'number',
  'customerNumber',
  'billingAddress',
  'careOf',
  'street',
  'secondary',
  'postalCode',
  'city',
  'country',
  'serviceAdvisorEmail',
  'vehicles',
  'numberPlate',
  'vin',
  'sharebox',
  'plateNumber',
  'description',
  'customerReference',
  'invoiceComments',
  'redirect',
  'successUrl',
  'cancelUrl',
  'cancelButtonText',
  'reason',
  'note',
  'fileName',
  'contentBase64',
  'paymentLink',
  // Payflow's error messages may quote what was sent
  'message',
  'msg',
]);

/** `reason` values that are a vocabulary, not free text (payment.creation_failed). */
const KEPT_REASONS: ReadonlySet<string> = new Set(DEAD_LETTER_REASONS);

/** JSON as JSON.parse returns it. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A scrubbed copy of `value` (see the file's comment); `found` collects the values erased. */
export function scrubJson(value: Json, found?: Set<string>): Json {
  return scrub(value, null, found);
}

function scrub(value: Json, field: string | null, found: Set<string> | undefined): Json {
  if (value === null || typeof value === 'boolean') return value;
  if (Array.isArray(value)) return value.map((entry) => scrub(entry, field, found));
  if (typeof value === 'object') {
    const copy: { [key: string]: Json } = {};
    for (const [name, entry] of Object.entries(value)) copy[name] = scrub(entry, name, found);
    return copy;
  }
  if (field !== null && keeps(field, value)) return value;
  if (value === ERASED) return value;
  found?.add(String(value));
  return ERASED;
}

function keeps(field: string, value: string | number): boolean {
  if (KEPT_FIELDS.has(field)) return true;
  return field === 'reason' && typeof value === 'string' && KEPT_REASONS.has(value);
}

/** What scrubbing stored bytes gave. */
export interface ScrubbedBytes {
  /** The scrubbed bytes: JSON scrubbed, or ERASED when they were not JSON. */
  readonly bytes: Buffer;
  /** Whether they differ from the bytes given. */
  readonly changed: boolean;
  /** The values erased (strings as they were), to sweep other copies with. */
  readonly erased: readonly string[];
}

/**
 * Scrubs stored message bytes. JSON is scrubbed and written back compactly; bytes that are
 * not UTF-8 JSON cannot be read field by field, so they are erased whole.
 */
export function scrubBytes(bytes: Buffer): ScrubbedBytes {
  const json = parseJson(bytes);
  if (json === undefined) {
    const erased = Buffer.from(ERASED);
    return { bytes: erased, changed: !bytes.equals(erased), erased: [] };
  }
  const found = new Set<string>();
  const scrubbed = Buffer.from(JSON.stringify(scrubJson(json, found)));
  return { bytes: scrubbed, changed: found.size > 0, erased: [...found] };
}

/** The bytes as JSON, or undefined when they are not UTF-8 JSON. */
export function parseJson(bytes: Buffer): Json | undefined {
  try {
    return JSON.parse(UTF8.decode(bytes)) as Json;
  } catch {
    return undefined;
  }
}

/** Shortest value worth sweeping other text for: shorter ones match too much by chance. */
const SWEEP_MIN_LENGTH = 4;

/**
 * `text` with every occurrence of the erased values replaced by ERASED: for what quotes an
 * event rather than holds it (an error message, a dead letter's `x-dlq-error` header).
 * Longest values first, so that a value containing another is replaced whole.
 */
export function sweepText(text: string, erased: Iterable<string>): string {
  const values = [...new Set(erased)]
    .filter((value) => value.length >= SWEEP_MIN_LENGTH && value !== ERASED)
    .sort((a, b) => b.length - a.length);
  let swept = text;
  for (const value of values) swept = swept.split(value).join(ERASED);
  return swept;
}

/** Strict UTF-8: bytes that are not are not JSON either. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
