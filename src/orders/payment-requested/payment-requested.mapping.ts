/**
 * order.payment_requested → POST /api/payments (CONTRACT §2 mapping rules). Pure: the
 * webhook credentials and the payment-method check are added by the handler. What a payment
 * may be created with (its totals, its installment plan) is the payment aggregate's rule
 * (checkNewPaymentTotals, checkInstallmentPlan).
 */
import { compact } from '../../payflow/wire/payflow.mapping.js';
import type { CreatePaymentInput, PaymentItemInput } from '../../payflow/payflow.types.js';
import { checkInstallmentPlan, checkNewPaymentTotals } from '../../payments/payment.aggregate.js';
import {
  addMonthsClamped,
  amountToMinor,
  lineTotals,
  mapLines,
  toPaymentItem,
} from '../mapping/order-amounts.js';
import type { OrderEvent, PaymentRequestedData } from '../../events/order-event.schema.js';

/** One installment of the plan, with the ERP's reference. */
export interface PlannedInstallment {
  /** `installmentRef` of the array form, else the 1-based position as text. */
  readonly ref: string;
  /** 1-based. */
  readonly position: number;
  readonly date: string;
  readonly grossMinor: number;
  readonly items?: readonly PaymentItemInput[];
}

export interface MappedPaymentRequest {
  /** The create-payment body, without `callback` (added per attempt). */
  readonly input: Omit<CreatePaymentInput, 'callback'>;
  readonly currency: string;
  readonly totalGrossMinor: number;
  readonly totalNetMinor: number;
  readonly vatMinor: number;
  readonly installments: readonly PlannedInstallment[] | null;
  readonly paymentMethodId: string | null;
  /** The ERP's `paymentRef` / `externalRef`, as sent to Payflow (null: not sent). */
  readonly paymentRef: string | null;
  readonly externalRef: string | null;
}

const OBJECT_TYPES = { new: 'newCar', tradeIn: 'tradeInCAR', other: '' } as const;

export function mapPaymentRequested(
  event: OrderEvent<'order.payment_requested'>,
): MappedPaymentRequest {
  const data = event.data;
  const currency = data.currency;
  const lines = mapLines(data.lines, currency);
  const totals = lineTotals(lines);
  checkNewPaymentTotals(totals, currency);
  const installments = planInstallments(data, currency, totals.grossMinor);

  const input: Omit<CreatePaymentInput, 'callback'> = compact({
    customer: compact({ ...data.customer }),
    order: {
      orderNumber: data.orderNumber,
      objects: data.vehicles.map((vehicle) =>
        compact({
          type: OBJECT_TYPES[vehicle.role],
          numberPlate: vehicle.numberPlate,
          brand: vehicle.brand,
          model: vehicle.model,
          color: vehicle.color,
          year: vehicle.year === undefined ? undefined : String(vehicle.year),
          vinNumber: vehicle.vin,
        }),
      ),
    },
    payment: compact({
      currency,
      totalGrossAmountMinor: totals.grossMinor,
      totalNetAmountMinor: totals.netMinor,
      items: lines.map(toPaymentItem),
      installments:
        installments === null
          ? undefined
          : installments.map((installment) =>
              compact({
                date: installment.date,
                grossAmountMinor: installment.grossMinor,
                items: installment.items,
              }),
            ),
      dueDate: data.dueDate,
      invoiceNumber: data.invoiceNumber,
      customerReference: data.customerReference,
      invoiceComments: data.invoiceComments,
      profileId: data.profileId,
      paymentDepartment: data.paymentDepartment,
      paymentRef: data.paymentRef ?? undefined,
      // Always the order id (CONTRACT §2): the ERP sets paymentRef and externalRef only.
      internalRef: event.orderId,
      externalRef: data.externalRef ?? undefined,
    }),
    communication:
      data.sendPaymentLink === undefined && data.sendPaymentReminder === undefined
        ? undefined
        : compact({
            send_payment_link: data.sendPaymentLink,
            send_payment_reminder: data.sendPaymentReminder,
          }),
    behaviour: behaviourOf(data.redirect),
    serviceAdvisorEmail: data.serviceAdvisorEmail,
    paymentMethodId: data.paymentMethodId,
    supportFunctions:
      data.sharebox === undefined
        ? undefined
        : [{ sharebox: { useSharebox: true, plateNumber: data.sharebox.plateNumber } }],
  });
  return {
    input,
    currency,
    totalGrossMinor: totals.grossMinor,
    totalNetMinor: totals.netMinor,
    vatMinor: totals.vatMinor,
    installments,
    paymentMethodId: data.paymentMethodId ?? null,
    paymentRef: data.paymentRef ?? null,
    externalRef: data.externalRef ?? null,
  };
}

function behaviourOf(
  redirect: PaymentRequestedData['redirect'],
): CreatePaymentInput['behaviour'] | undefined {
  if (redirect === undefined) return undefined;
  const behaviour = compact({
    redirectSuccessUrl: redirect.successUrl,
    redirectCancelUrl: redirect.cancelUrl,
    // Payflow shows the cancel button's label only with a cancel URL: sent only then.
    cancelButtonText: redirect.cancelUrl === undefined ? undefined : redirect.cancelButtonText,
  });
  return Object.keys(behaviour).length === 0 ? undefined : behaviour;
}

function planInstallments(
  data: PaymentRequestedData,
  currency: string,
  grossMinor: number,
): PlannedInstallment[] | null {
  const plan = data.installments;
  if (plan === undefined) return null;
  let planned: PlannedInstallment[];
  if (Array.isArray(plan)) {
    planned = plan.map((entry, index) => {
      const field = `installments[${index}]`;
      const lines =
        entry.lines === undefined ? undefined : mapLines(entry.lines, currency, `${field}.lines`);
      return compact({
        ref: entry.installmentRef ?? String(index + 1),
        position: index + 1,
        date: entry.date,
        grossMinor: amountToMinor(entry.amount, currency, `${field}.amount`),
        items: lines?.map(toPaymentItem),
      });
    });
  } else {
    const { count, firstDate, intervalMonths } = plan;
    const base = Math.floor(grossMinor / count);
    const remainder = grossMinor - base * count;
    planned = Array.from({ length: count }, (_, index) => ({
      ref: String(index + 1),
      position: index + 1,
      date: addMonthsClamped(firstDate, index * intervalMonths),
      grossMinor: index === 0 ? base + remainder : base,
    }));
  }
  checkInstallmentPlan(planned, grossMinor, currency);
  return planned;
}
