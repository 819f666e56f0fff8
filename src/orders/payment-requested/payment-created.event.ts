import { formatMinorUnits } from '../../money/money.js';
import type { StatusEvent, StatusEventData } from '../../payments/payment-status-events.js';

export interface CreatedInstallmentView {
  readonly ref: string;
  readonly payflowId: string | null;
  readonly date: string;
  readonly grossMinor: number;
  readonly status: string | null;
}

export interface CreatedPaymentView {
  /** The order.payment_requested event that asked for the payment. */
  readonly sourceEventId: string | null;
  readonly orderId: string;
  readonly organizationId: string | null;
  readonly payflowId: string;
  readonly paymentLink: string | null;
  readonly currency: string;
  readonly totalGrossMinor: number;
  readonly totalNetMinor: number;
  readonly paymentMethodId: string | null;
  readonly installments: readonly CreatedInstallmentView[];
}

/** payment.created (CONTRACT §3): the link, the installments with Payflow's ids, the totals. */
export function paymentCreatedEvent(view: CreatedPaymentView): StatusEvent<'payment.created'> {
  const { currency } = view;
  return {
    type: 'payment.created',
    orderId: view.orderId,
    organizationId: view.organizationId,
    paymentId: view.payflowId,
    data: {
      sourceEventId: view.sourceEventId,
      paymentLink: view.paymentLink,
      currency,
      totalGrossAmount: formatMinorUnits(view.totalGrossMinor, currency),
      totalNetAmount: formatMinorUnits(view.totalNetMinor, currency),
      vatAmount: formatMinorUnits(view.totalGrossMinor - view.totalNetMinor, currency),
      paymentMethodId: view.paymentMethodId,
      installments: view.installments.map((installment) => ({
        installmentRef: installment.ref,
        installmentId: installment.payflowId,
        date: installment.date,
        amount: formatMinorUnits(installment.grossMinor, currency),
        currency,
        status: installment.status,
      })),
    },
  };
}

export interface CreationFailure {
  /** rejected_by_payflow, in_doubt or mapping_failed. */
  readonly reason: StatusEventData<'payment.creation_failed'>['reason'];
  readonly code: string;
  readonly message: string;
  readonly validation: readonly { loc: readonly (string | number)[]; msg: string; type: string }[];
}

/** payment.creation_failed (CONTRACT §3). */
export function creationFailedEvent(
  sourceEventId: string,
  orderId: string,
  organizationId: string | null,
  failure: CreationFailure,
): StatusEvent<'payment.creation_failed'> {
  return {
    type: 'payment.creation_failed',
    orderId,
    organizationId,
    paymentId: null,
    data: {
      sourceEventId,
      reason: failure.reason,
      code: failure.code,
      message: failure.message,
      validation: failure.validation,
    },
  };
}
