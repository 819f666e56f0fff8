/**
 * order.refund_requested → POST /api/refund: totals from amountGross/amountNet, invoice
 * lines from `lines` (unit prices and VAT computed like payment lines), in minor units of
 * the event's currency, which must be the payment's.
 */
import type { RefundInput, RefundLineInput } from '../../payflow/payflow.types.js';
import { amountToMinor, mapLines, mappingFailed } from '../shared/order-amounts.js';
import type { OrderEventData } from '../../events/order-event.schema.js';

export type MappedRefund = Omit<RefundInput, 'paymentId'> & {
  /** The ERP's refund reference. */
  readonly refundRef: string;
};

export function mapRefundRequested(data: OrderEventData<'order.refund_requested'>): MappedRefund {
  const { currency } = data;
  const totalGrossAmountMinor = amountToMinor(data.amountGross, currency, 'amountGross');
  const totalNetAmountMinor = amountToMinor(data.amountNet, currency, 'amountNet');
  if (totalNetAmountMinor > totalGrossAmountMinor) {
    throw mappingFailed('ORDER.REFUND_NET_ABOVE_GROSS', 'amountNet is greater than amountGross');
  }
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

/** The refund must be in the payment's currency. */
export function assertRefundCurrency(refund: MappedRefund, paymentCurrency: string): void {
  if (refund.currency !== paymentCurrency) {
    throw mappingFailed(
      'ORDER.CURRENCY_MISMATCH',
      `refund ${refund.refundRef} is in ${refund.currency} but the payment is in ${paymentCurrency}`,
    );
  }
}
