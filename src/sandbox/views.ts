/** Wire representations of the sandbox's state (amounts back to JSON numbers in major units). */
import { minorUnitsToJsonNumber } from '../common/money.js';
import { isoOf } from './clock.js';
import type { Installment, Organization, Payment, PaymentDocument, Refund } from './state.js';

export function amount(minor: number, currency: string): number {
  return minorUnitsToJsonNumber(minor, currency);
}

export function installmentRecord(installment: Installment, currency: string) {
  return {
    id: installment.id,
    date: installment.date,
    type: installment.type,
    grossAmount: amount(installment.grossMinor, currency),
    status: installment.status,
    numTried: installment.numTried,
    successfullyChargedAt:
      installment.successfullyChargedAt === null ? null : isoOf(installment.successfullyChargedAt),
    numFailed: installment.numFailed,
    lastFailedAt: installment.lastFailedAt === null ? null : isoOf(installment.lastFailedAt),
  };
}

export function installmentRecords(payment: Payment) {
  return payment.installments?.map((entry) => installmentRecord(entry, payment.currency)) ?? null;
}

export function documentRecord(document: PaymentDocument) {
  return {
    id: document.id,
    paymentId: document.paymentId,
    fileName: document.fileName,
    contentType: document.contentType,
    size: document.size,
    uploadedAt: isoOf(document.uploadedAt),
  };
}

export function paymentLinkPath(payment: Payment): string {
  return `/p/${payment.id}`;
}

export function createPaymentResponse(payment: Payment, organization: Organization) {
  const gui = paymentLinkPath(payment);
  return {
    id: payment.id,
    _links: { longGui: `https://${organization.linkDomain}${gui}`, gui },
    installments: installmentRecords(payment),
  };
}

export function paymentStatusResponse(payment: Payment) {
  return {
    totalAmount: amount(payment.totalMinor, payment.currency),
    installments: installmentRecords(payment),
    paymentId: payment.id,
    paymentNumber: payment.number,
    paymentStatus: { paymentStatus: payment.status },
    merchantId: payment.organizationId,
    createdAt: isoOf(payment.createdAt),
    dueDate: payment.dueDate,
    files: [...payment.documents.values()].map(documentRecord),
    currency: payment.currency,
  };
}

export function refundRecord(refund: Refund, currency: string) {
  return {
    refundId: refund.refundId,
    refundType: refund.refundType,
    grossRefundedAmount: amount(refund.grossMinor, currency),
    netRefundedAmount: amount(refund.netMinor, currency),
    remainingAmount: amount(refund.remainingMinor, currency),
    createdAt: isoOf(refund.createdAt),
  };
}

/** GET /sandbox/payments: everything the sandbox knows about a payment. */
export function sandboxPaymentView(payment: Payment) {
  return {
    id: payment.id,
    paymentNumber: payment.number,
    organizationId: payment.organizationId,
    clientId: payment.clientId,
    status: payment.status,
    currency: payment.currency,
    totalAmount: amount(payment.totalMinor, payment.currency),
    netAmount: amount(payment.netMinor, payment.currency),
    createdAt: isoOf(payment.createdAt),
    dueDate: payment.dueDate,
    profileId: payment.profileId,
    paymentMethodId: payment.paymentMethodId,
    lastTerminalId: payment.lastTerminalId,
    manualPaidNote: payment.manualPaidNote,
    terminalFailures: payment.terminalFailures,
    body: payment.body,
    installments: installmentRecords(payment),
    refunds: payment.refunds.map((refund) => refundRecord(refund, payment.currency)),
    // The control API also says what arrived (Payflow's own answers do not).
    documents: [...payment.documents.values()].map((document) => ({
      ...documentRecord(document),
      sha256: document.sha256,
    })),
  };
}
