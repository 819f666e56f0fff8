/** order.installment_changed → PUT …/installments/{id}: only the fields that change. */
import type { UpdateInstallmentInput } from '../../payflow/payflow.types.js';
import { amountToMinor, mapLines, toPaymentItem } from '../mapping/order-amounts.js';
import type { OrderEventData } from '../../events/order-event.schema.js';

export function mapInstallmentChanged(
  data: OrderEventData<'order.installment_changed'>,
  currency: string,
): UpdateInstallmentInput {
  return {
    ...(data.date === undefined ? {} : { date: data.date }),
    ...(data.amount === undefined
      ? {}
      : { grossAmountMinor: amountToMinor(data.amount, currency, 'amount') }),
    ...(data.lines === undefined
      ? {}
      : { items: mapLines(data.lines, currency).map(toPaymentItem) }),
  };
}
