/**
 * Wire ↔ domain mapping: integer minor units inside, JSON numbers in the currency's major unit
 * on the wire (docs/assumptions.md "Money"). Conversion is exact (src/money/money.ts).
 *
 * Functions here throw plain errors (money's ValidationError, MappingError); the client turns
 * a failure on the request side into PayflowInvalidRequestError (nothing sent) and one on the
 * response side into PayflowBadResponseError.
 */
import { currencyExponent, minorUnitsToJsonNumber, toMinorUnits } from '../../money/money.js';
import type {
  CancelPaymentResponse,
  CreateInstallmentBody,
  CreatePaymentBody,
  CreatePaymentResponse,
  DocumentRecord,
  PayflowItem,
  RefundBody,
  RefundResponse,
  UnshownInstallmentRecord,
  UpdateInstallmentBody,
  UploadDocumentBody,
} from './payflow.schemas.js';
import type {
  CreatePaymentInput,
  CreatedPayment,
  Installment,
  InstallmentInput,
  PayflowDocument,
  PaymentItemInput,
  PaymentStatus,
  RefundInput,
  RefundLineInput,
  RefundResult,
  UpdateInstallmentInput,
} from '../payflow.types.js';

/** A value that cannot be mapped (the message names the field, never its value). */
export class MappingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MappingError';
  }
}

/**
 * Largest magnitude of minor units sent as a JSON number: 15 significant digits always
 * survive the round trip through a double (Number → shortest text), more may not.
 */
export const MAX_EXACT_MINOR_UNITS = 999_999_999_999_999;

/** Minor units → Payflow's JSON number, exactly; refuses amounts a double cannot carry exactly. */
export function toWireAmount(minor: number, currency: string, field: string): number {
  if (!Number.isSafeInteger(minor)) {
    throw new MappingError(`${field} must be an integer amount of minor units`);
  }
  if (Math.abs(minor) > MAX_EXACT_MINOR_UNITS) {
    throw new MappingError(`${field} is too large to send exactly as a JSON number`);
  }
  return minorUnitsToJsonNumber(minor, currency);
}

/**
 * Payflow's amount → minor units, exactly: a JSON number, or decimal text where the spec shows
 * no shape (payflow.lenient.ts). More decimals than the currency has is an error.
 */
export function fromWireAmount(value: number | string, currency: string, field: string): number {
  try {
    return toMinorUnits(value, currency);
  } catch {
    throw new MappingError(`${field} is not an exact amount of ${currency}`);
  }
}

/** Checks the currency is a known ISO 4217 code with minor units. */
export function assertCurrency(currency: string, field: string): void {
  try {
    currencyExponent(currency);
  } catch {
    throw new MappingError(`${field} is not a known ISO 4217 currency`);
  }
}

function optionalAmount(
  minor: number | undefined,
  currency: string,
  field: string,
): number | undefined {
  return minor === undefined ? undefined : toWireAmount(minor, currency, field);
}

function nullableAmount(
  minor: number | null | undefined,
  currency: string,
  field: string,
): number | null | undefined {
  return minor === null || minor === undefined ? minor : toWireAmount(minor, currency, field);
}

/** Drops keys whose value is undefined, so the JSON body carries only what was given. */
export function compact<T extends object>(value: T): T {
  // A plain loop: this runs several times per event on the hot path (no entry arrays).
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const entry = (value as Record<string, unknown>)[key];
    if (entry !== undefined) result[key] = entry;
  }
  return result as T;
}

// ---------------------------------------------------------------- requests

export function toWireItem(item: PaymentItemInput, currency: string, at: string): PayflowItem {
  return compact({
    description: item.description,
    grossUnitPrice: optionalAmount(item.grossUnitPriceMinor, currency, `${at}.grossUnitPrice`),
    netUnitPrice: optionalAmount(item.netUnitPriceMinor, currency, `${at}.netUnitPrice`),
    grossTotalPrice: nullableAmount(item.grossTotalPriceMinor, currency, `${at}.grossTotalPrice`),
    netTotalPrice: nullableAmount(item.netTotalPriceMinor, currency, `${at}.netTotalPrice`),
    vatAmount: optionalAmount(item.vatAmountMinor, currency, `${at}.vatAmount`),
    quantity: item.quantity,
    taxRate: item.taxRate,
    discountRate: item.discountRate,
    lineType: item.lineType,
  });
}

function toWireItems(
  items: readonly PaymentItemInput[] | undefined,
  currency: string,
  at: string,
): PayflowItem[] | undefined {
  return items?.map((item, index) => toWireItem(item, currency, `${at}[${index}]`));
}

export function toWireCreateInstallment(
  input: InstallmentInput,
  currency: string,
  at = 'installment',
): CreateInstallmentBody {
  assertCurrency(currency, 'currency');
  return compact({
    date: input.date,
    grossAmount: toWireAmount(input.grossAmountMinor, currency, `${at}.grossAmount`),
    items: toWireItems(input.items, currency, `${at}.items`),
  });
}

export function toWireUpdateInstallment(
  input: UpdateInstallmentInput,
  currency: string,
): UpdateInstallmentBody {
  assertCurrency(currency, 'currency');
  return compact({
    date: input.date,
    grossAmount: optionalAmount(input.grossAmountMinor, currency, 'grossAmount'),
    items: toWireItems(input.items, currency, 'items'),
  });
}

export function toWireCreatePayment(input: CreatePaymentInput): CreatePaymentBody {
  const { payment, ...rest } = input;
  const currency = payment.currency;
  assertCurrency(currency, 'payment.currency');
  const wirePayment: CreatePaymentBody['payment'] = compact({
    currency,
    totalGrossAmount: toWireAmount(
      payment.totalGrossAmountMinor,
      currency,
      'payment.totalGrossAmount',
    ),
    totalNetAmount: toWireAmount(payment.totalNetAmountMinor, currency, 'payment.totalNetAmount'),
    installments:
      payment.installments === null || payment.installments === undefined
        ? payment.installments
        : payment.installments.map((installment, index) =>
            toWireCreateInstallment(installment, currency, `payment.installments[${index}]`),
          ),
    installmentsMode: payment.installmentsMode,
    items: toWireItems(payment.items, currency, 'payment.items'),
    dueDate: payment.dueDate,
    paymentRef: payment.paymentRef,
    invoiceNumber: payment.invoiceNumber,
    customerReference: payment.customerReference,
    invoiceComments: payment.invoiceComments,
    profileId: payment.profileId,
    paymentDepartment: payment.paymentDepartment,
    internalRef: payment.internalRef,
    externalRef: payment.externalRef,
  });
  // The rest of the body has no money in it and passes through (validated by the schema).
  return { ...(rest as Omit<CreatePaymentBody, 'payment'>), payment: wirePayment };
}

function toWireRefundLine(line: RefundLineInput, currency: string, at: string) {
  return {
    description: line.description,
    grossUnitPrice: toWireAmount(line.grossUnitPriceMinor, currency, `${at}.grossUnitPrice`),
    netUnitPrice: toWireAmount(line.netUnitPriceMinor, currency, `${at}.netUnitPrice`),
    quantity: line.quantity,
    vatAmount: toWireAmount(line.vatAmountMinor, currency, `${at}.vatAmount`),
    taxRate: line.taxRate,
  };
}

export function toWireRefund(input: RefundInput): RefundBody {
  const { currency } = input;
  assertCurrency(currency, 'currency');
  return {
    crossPayment: input.paymentId,
    currency,
    totalGrossAmount: toWireAmount(input.totalGrossAmountMinor, currency, 'totalGrossAmount'),
    totalNetAmount: toWireAmount(input.totalNetAmountMinor, currency, 'totalNetAmount'),
    invoiceLines: (input.invoiceLines ?? []).map((line, index) =>
      toWireRefundLine(line, currency, `invoiceLines[${index}]`),
    ),
  };
}

// ---------------------------------------------------------------- responses

/** Reads the strict record and the one of an unshown shape alike (its type is the wider). */
export function fromWireInstallment(
  record: UnshownInstallmentRecord,
  currency: string,
  at = 'installment',
): Installment {
  return {
    id: record.id,
    date: record.date,
    type: record.type,
    status: record.status,
    currency,
    grossAmountMinor: fromWireAmount(record.grossAmount, currency, `${at}.grossAmount`),
    numTried: record.numTried,
    numFailed: record.numFailed,
    successfullyChargedAt: record.successfullyChargedAt,
    lastFailedAt: record.lastFailedAt,
    raw: record,
  };
}

function fromWireInstallments(
  records: readonly UnshownInstallmentRecord[],
  currency: string,
): Installment[] {
  return records.map((record, index) =>
    fromWireInstallment(record, currency, `installments[${index}]`),
  );
}

/** `currency` is the one the payment was created with. */
export function fromWireCreatePayment(
  response: CreatePaymentResponse,
  currency: string,
): CreatedPayment {
  return {
    id: response.id,
    paymentLink: response._links?.longGui,
    currency,
    installments:
      response.installments === null || response.installments === undefined
        ? null
        : fromWireInstallments(response.installments, currency),
    raw: response,
  };
}

/**
 * The response's own `currency` wins; `knownCurrency` (from the caller) is the fallback and,
 * when both are present, must agree.
 */
export function fromWirePaymentStatus(
  response: CancelPaymentResponse,
  knownCurrency: string | undefined,
): PaymentStatus {
  const currency = response.currency ?? knownCurrency;
  if (currency === undefined) {
    throw new MappingError('the response has no currency and the caller named none');
  }
  if (knownCurrency !== undefined && response.currency !== undefined) {
    if (knownCurrency !== response.currency) {
      throw new MappingError(
        `the payment's currency ${response.currency} is not the expected ${knownCurrency}`,
      );
    }
  }
  assertCurrency(currency, 'currency');
  return {
    paymentId: response.paymentId,
    paymentNumber: response.paymentNumber,
    status: response.paymentStatus.paymentStatus,
    currency,
    totalAmountMinor: fromWireAmount(response.totalAmount, currency, 'totalAmount'),
    installments: fromWireInstallments(response.installments ?? [], currency),
    merchantId: response.merchantId,
    createdAt: response.createdAt,
    dueDate: response.dueDate,
    files: response.files ?? [],
    raw: response,
  };
}

/**
 * The upload answer, completed from the upload itself where the spec's unshown answer leaves
 * a field out (the size is the decoded content's).
 */
export function fromWireDocument(
  record: DocumentRecord,
  sent: UploadDocumentBody,
  sentBytes: number,
): PayflowDocument {
  return {
    id: record.id,
    paymentId: record.paymentId ?? sent.paymentId,
    fileName: record.fileName ?? sent.fileName,
    contentType: record.contentType ?? sent.contentType,
    size: record.size ?? sentBytes,
    uploadedAt: record.uploadedAt,
    raw: record,
  };
}

export function fromWireRefund(response: RefundResponse): RefundResult {
  const currency = response.originalCurrency;
  assertCurrency(currency, 'originalCurrency');
  return {
    refundId: response.refundId,
    refundType: response.refundType,
    debtorAccountNumber: response.debtorAccountNumber,
    currency,
    originalAmountMinor: fromWireAmount(response.originalAmount, currency, 'originalAmount'),
    grossRefundedAmountMinor: fromWireAmount(
      response.grossRefundedAmount,
      currency,
      'grossRefundedAmount',
    ),
    netRefundedAmountMinor: fromWireAmount(
      response.netRefundedAmount,
      currency,
      'netRefundedAmount',
    ),
    remainingAmountMinor:
      response.remainingAmount === null
        ? null
        : fromWireAmount(response.remainingAmount, currency, 'remainingAmount'),
    raw: response,
  };
}
