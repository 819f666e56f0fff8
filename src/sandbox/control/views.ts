/**
 * What the control API (GET /sandbox/payments) shows of a payment: everything the sandbox
 * knows, always in the standard shape. Payflow's own answers are written by shapes.ts.
 */
import { isoOf } from '../state/clock.js';
import { Shapes, amount } from '../payments/shapes.js';
import type { Payment, Refund } from '../state/state.js';

const standard = new Shapes('standard');

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
    body: JSON.parse(payment.bodyJson) as unknown,
    installments: standard.installments(payment, 'shown'),
    refunds: payment.refunds.map((refund) => refundRecord(refund, payment.currency)),
    // The control API also says what arrived (Payflow's own answers do not).
    documents: [...payment.documents.values()].map((document) => ({
      ...standard.document(document),
      sha256: document.sha256,
    })),
  };
}
