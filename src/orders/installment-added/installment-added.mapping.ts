/** order.installment_added → POST …/installments/create, in the payment's currency. */
import type { InstallmentInput } from '../../payflow/payflow.types.js';
import { amountToMinor, mapLines, toPaymentItem } from '../mapping/order-amounts.js';
import type { OrderEventData } from '../../events/order-event.schema.js';

export interface MappedInstallmentAdded {
  readonly ref: string;
  readonly input: InstallmentInput;
}

export function mapInstallmentAdded(
  data: OrderEventData<'order.installment_added'>,
  currency: string,
): MappedInstallmentAdded {
  const input: InstallmentInput = {
    date: data.date,
    grossAmountMinor: amountToMinor(data.amount, currency, 'amount'),
    ...(data.lines === undefined
      ? {}
      : { items: mapLines(data.lines, currency).map(toPaymentItem) }),
  };
  return { ref: data.installmentRef, input };
}
