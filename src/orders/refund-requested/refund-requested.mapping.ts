/**
 * order.refund_requested → POST /api/refund: totals from amountGross/amountNet, invoice
 * lines from `lines` (unit prices and VAT computed like payment lines), in minor units of
 * the event's currency. The refund's rules against its payment (currency, reference) are
 * the payment aggregate's (PaymentAggregate.requestRefund).
 */
import type { RefundInput, RefundLineInput } from '../../payflow/payflow.types.js';
import { checkRefundAmounts } from '../../payments/payment.aggregate.js';
import { amountToMinor, mapLines } from '../mapping/order-amounts.js';
import type { OrderEventData } from '../../events/order-event.schema.js';

export type MappedRefund = Omit<RefundInput, 'paymentId'> & {
  /** The ERP's refund reference. */
  readonly refundRef: string;
};

export function mapRefundRequested(data: OrderEventData<'order.refund_requested'>): MappedRefund {
  const { currency } = data;
  const totalGrossAmountMinor = amountToMinor(data.amountGross, currency, 'amountGross');
  const totalNetAmountMinor = amountToMinor(data.amountNet, currency, 'amountNet');
  checkRefundAmounts(totalGrossAmountMinor, totalNetAmountMinor);
  const invoiceLines: RefundLineInput[] = mapLines(data.lines ?? [], currency).map((line) => ({
    description: line.description,
    quantity: line.quantity,
    taxRate: line.taxRate,
    netUnitPriceMinor: line.netUnitPriceMinor,
    grossUnitPriceMinor: line.grossUnitPriceMinor,
    vatAmountMinor: line.vatMinor,
  }));
  return {
    refundRef: data.refundId,
    currency,
    totalGrossAmountMinor,
    totalNetAmountMinor,
    invoiceLines,
  };
}
