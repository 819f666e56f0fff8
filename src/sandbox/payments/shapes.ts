/**
 * How the sandbox writes its answers and webhook bodies, in one of two shapes
 * (SANDBOX_SHAPES, the `shapes` option; docs/assumptions.md, sandbox shapes):
 *
 * - `standard`: the shapes docs/assumptions.md decides (ISO 8601 times, `YYYY-MM-DD`
 *   dueDate, JSON-number amounts, `expires_in`), which the bridge is built on;
 * - `alternate`: every field the spec types `any` or leaves "not shown" in another shape the
 *   spec allows just as well: times as epoch milliseconds, dueDate as a date-time, amounts
 *   as decimal text where the shape is not shown, no `expires_in`, no
 *   `debtorAccountNumber` (optional), and unknown fields in every JSON object.
 *
 * The choice lives here only: one Encoding per shape, and one method per view that every
 * route, service and webhook goes through.
 */
import { formatMinorUnits, minorUnitsToJsonNumber } from '../../money/money.js';
import type { WebhookPayload } from '../../payflow/wire/payflow.schemas.js';
import { isoOf } from '../state/clock.js';
import type {
  AccessToken,
  Client,
  Installment,
  Organization,
  Payment,
  PaymentDocument,
  Refund,
} from '../state/state.js';

export const SHAPE_NAMES = ['standard', 'alternate'] as const;
export type ShapeName = (typeof SHAPE_NAMES)[number];

export type JsonObject = Record<string, unknown>;

/** Whether the spec shows the record's field types (an installment record) or not. */
export type Shown = 'shown' | 'not_shown';

/** An amount as the JSON number in major units the spec types. */
export function amount(minor: number, currency: string): number {
  return minorUnitsToJsonNumber(minor, currency);
}

export function paymentLinkPath(payment: Payment): string {
  return `/p/${payment.id}`;
}

/** What a webhook body says besides its times and installments. */
export interface WebhookFields {
  deliveryId: string;
  event: WebhookPayload['event'];
  change: string;
  /** Fields of some events only: previousPaymentStatus, terminalId, resend, … */
  extra: JsonObject;
}

interface Encoding {
  /** A point in time where the spec types `any` or shows no shape. */
  time: (ms: number) => string | number;
  /** `dueDate` of the payment status (typed `any`). */
  dueDate: (date: string) => string;
  /** An amount in a shape the spec does not show. */
  unshownAmount: (minor: number, currency: string) => number | string;
  /** `expires_in` of the token answer (RFC 6749 only recommends it). */
  expiresIn: boolean;
  /** `debtorAccountNumber` of the refund answer (optional, default ""). */
  debtorAccountNumber: boolean;
  /** Fields no client knows, added to every JSON object answered or sent. */
  unknownFields: Readonly<JsonObject> | undefined;
}

const ENCODINGS: Readonly<Record<ShapeName, Encoding>> = {
  standard: {
    time: isoOf,
    dueDate: (date) => date,
    unshownAmount: amount,
    expiresIn: true,
    debtorAccountNumber: true,
    unknownFields: undefined,
  },
  alternate: {
    time: (ms) => ms,
    dueDate: (date) => `${date}T00:00:00.000Z`,
    unshownAmount: formatMinorUnits,
    expiresIn: false,
    debtorAccountNumber: false,
    unknownFields: {
      sandboxShape: 'alternate',
      sandboxUnknownNull: null,
      sandboxUnknownList: [1, 'two'],
    },
  },
};

export class Shapes {
  private readonly encoding: Encoding;

  constructor(readonly name: ShapeName = 'standard') {
    this.encoding = ENCODINGS[name];
  }

  /** Any JSON answer or webhook body, with the shape's unknown fields in every object. */
  body<T>(value: T): T {
    const extra = this.encoding.unknownFields;
    return extra === undefined ? value : (withFields(value, extra) as T);
  }

  /**
   * The installment record: `shown` where the spec gives its field types (create-installment
   * and get answers, the status's installments), `not_shown` where it shows no shape (the
   * create answer's items, the PUT and DELETE answers, webhook bodies).
   */
  installment(installment: Installment, currency: string, shown: Shown): JsonObject {
    const { time } = this.encoding;
    return {
      id: installment.id,
      date: installment.date,
      type: installment.type,
      grossAmount:
        shown === 'shown'
          ? amount(installment.grossMinor, currency)
          : this.encoding.unshownAmount(installment.grossMinor, currency),
      status: installment.status,
      numTried: installment.numTried,
      successfullyChargedAt:
        installment.successfullyChargedAt === null ? null : time(installment.successfullyChargedAt),
      numFailed: installment.numFailed,
      lastFailedAt: installment.lastFailedAt === null ? null : time(installment.lastFailedAt),
    };
  }

  installments(payment: Payment, shown: Shown): JsonObject[] | null {
    return (
      payment.installments?.map((entry) => this.installment(entry, payment.currency, shown)) ?? null
    );
  }

  /** A document record (the upload answer, `files[]`): not shown by the spec. */
  document(document: PaymentDocument): JsonObject {
    return {
      id: document.id,
      paymentId: document.paymentId,
      fileName: document.fileName,
      contentType: document.contentType,
      size: document.size,
      uploadedAt: this.encoding.time(document.uploadedAt),
    };
  }

  createPayment(payment: Payment, organization: Organization): JsonObject {
    const gui = paymentLinkPath(payment);
    return {
      id: payment.id,
      _links: { longGui: `https://${organization.linkDomain}${gui}`, gui },
      installments: this.installments(payment, 'not_shown'),
    };
  }

  /** GET paymentStatus (`status`), or the cancel answer (`cancel`), which the spec does not show. */
  paymentStatus(payment: Payment, answer: 'status' | 'cancel'): JsonObject {
    const shown: Shown = answer === 'status' ? 'shown' : 'not_shown';
    return {
      totalAmount:
        answer === 'status'
          ? amount(payment.totalMinor, payment.currency)
          : this.encoding.unshownAmount(payment.totalMinor, payment.currency),
      installments: this.installments(payment, shown),
      paymentId: payment.id,
      paymentNumber: payment.number,
      paymentStatus: { paymentStatus: payment.status },
      merchantId: payment.organizationId,
      createdAt: isoOf(payment.createdAt),
      dueDate: this.encoding.dueDate(payment.dueDate),
      files: [...payment.documents.values()].map((document) => this.document(document)),
      currency: payment.currency,
    };
  }

  refund(payment: Payment, refund: Refund): JsonObject {
    const { currency } = payment;
    return {
      refundType: refund.refundType,
      ...(this.encoding.debtorAccountNumber ? { debtorAccountNumber: '' } : {}),
      originalAmount: amount(payment.totalMinor, currency),
      originalCurrency: currency,
      grossRefundedAmount: amount(refund.grossMinor, currency),
      netRefundedAmount: amount(refund.netMinor, currency),
      remainingAmount: amount(refund.remainingMinor, currency),
      refundId: refund.refundId,
    };
  }

  token(accessToken: string, scopes: readonly string[], ttlSeconds: number): JsonObject {
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      ...(this.encoding.expiresIn ? { expires_in: ttlSeconds } : {}),
      scope: scopes.join(' '),
    };
  }

  ping(client: Client, token: AccessToken): JsonObject {
    return {
      ok: true,
      clientId: client.clientId,
      scopes: [...token.scopes],
      expiresAt: this.encoding.time(token.expiresAt),
    };
  }

  /** A webhook body (not shown by the spec): `occurredAt` is a time, installments not shown. */
  webhook(payment: Payment, occurredAt: number, fields: WebhookFields): JsonObject {
    return this.body({
      deliveryId: fields.deliveryId,
      event: fields.event,
      occurredAt: this.encoding.time(occurredAt),
      organizationId: payment.organizationId,
      paymentId: payment.id,
      internalRef: payment.internalRef,
      paymentStatus: payment.status,
      installments: this.installments(payment, 'not_shown') ?? [],
      change: fields.change,
      ...fields.extra,
    });
  }
}

/** A copy of `value` with `extra` added to every plain object in it (arrays walked). */
function withFields(value: unknown, extra: Readonly<JsonObject>): unknown {
  if (Array.isArray(value)) return value.map((entry) => withFields(entry, extra));
  if (!isPlainObject(value)) return value;
  const copy: JsonObject = {};
  for (const [key, entry] of Object.entries(value)) copy[key] = withFields(entry, extra);
  return { ...copy, ...extra };
}

function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
