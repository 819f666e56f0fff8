import { describe, expect, it } from '@jest/globals';
import { MappingFailedError } from '../../errors/dead-letter.errors.js';
import { anEvent, refundRequestedData } from '../../../test/support/builders.js';
import { PaymentAggregate } from '../../payments/payment.aggregate.js';
import { mapRefundRequested, type MappedRefund } from './refund-requested.mapping.js';

/** The payment aggregate's currency rule, on a payment in `currency`. */
const assertRefundCurrency = (refund: MappedRefund, currency: string): void =>
  PaymentAggregate.of({
    id: 'p-1',
    orderId: 'o-1',
    currency,
    state: 'created',
    providerStatus: 'PENDING',
    totalGrossMinor: 0n,
    installments: [],
    refunds: [],
  }).requestRefund(refund);

const data = (overrides: Parameters<typeof refundRequestedData>[0] = {}) =>
  anEvent('order.refund_requested', refundRequestedData(overrides)).data;

describe('mapRefundRequested', () => {
  it('takes the totals from the amounts and the invoice lines from the lines', () => {
    expect(
      mapRefundRequested(
        data({
          refundId: 'R-1',
          amountGross: '187.50',
          amountNet: 150,
          lines: [
            { description: 'Part', quantity: 2, unitPriceNet: '50.00', taxRate: 25 },
            { description: 'Labour', quantity: '0.5', unitPriceNet: '100.00', taxRate: 25 },
          ],
        }),
      ),
    ).toEqual({
      refundRef: 'R-1',
      currency: 'NOK',
      totalGrossAmountMinor: 18750,
      totalNetAmountMinor: 15000,
      invoiceLines: [
        {
          description: 'Part',
          quantity: 2,
          taxRate: 25,
          netUnitPriceMinor: 5000,
          grossUnitPriceMinor: 6250,
          vatAmountMinor: 2500,
        },
        {
          description: 'Labour',
          quantity: 0.5,
          taxRate: 25,
          netUnitPriceMinor: 10000,
          grossUnitPriceMinor: 12500,
          vatAmountMinor: 1250,
        },
      ],
    });
  });

  it('sends no invoice lines when the event has none', () => {
    expect(mapRefundRequested(data({ lines: undefined })).invoiceLines).toEqual([]);
  });

  it('refuses amounts with too many decimals, net above gross and another currency', () => {
    expect(() => mapRefundRequested(data({ amountGross: '1.001' }))).toThrow(
      'amountGross has more decimals than NOK allows (2)',
    );
    expect(() => mapRefundRequested(data({ amountGross: '10', amountNet: '11' }))).toThrow(
      MappingFailedError,
    );
    const refund = mapRefundRequested(data({ refundId: 'R-9', currency: 'EUR' }));
    expect(() => assertRefundCurrency(refund, 'NOK')).toThrow(
      'refund R-9 is in EUR but the payment is in NOK',
    );
    expect(() => assertRefundCurrency(refund, 'EUR')).not.toThrow();
  });
});
