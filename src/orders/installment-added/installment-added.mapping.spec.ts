import { describe, expect, it } from '@jest/globals';
import { anEvent, installmentAddedData } from '../../../test/support/builders.js';
import { mapInstallmentAdded } from './installment-added.mapping.js';

describe('mapInstallmentAdded', () => {
  it('maps the amount and lines in the payment currency', () => {
    const event = anEvent(
      'order.installment_added',
      installmentAddedData({
        installmentRef: 'x-1',
        date: '2027-03-01',
        amount: '125',
        lines: [{ description: 'Extra', quantity: 1, unitPriceNet: 100, taxRate: 25 }],
      }),
    );
    expect(mapInstallmentAdded(event.data, 'NOK')).toEqual({
      ref: 'x-1',
      input: {
        date: '2027-03-01',
        grossAmountMinor: 12500,
        items: [
          {
            description: 'Extra',
            quantity: 1,
            taxRate: 25,
            discountRate: 0,
            lineType: 'regular',
            netUnitPriceMinor: 10000,
            grossUnitPriceMinor: 12500,
            netTotalPriceMinor: 10000,
            grossTotalPriceMinor: 12500,
            vatAmountMinor: 2500,
          },
        ],
      },
    });
    expect(mapInstallmentAdded({ ...event.data, lines: undefined }, 'JPY').input).toEqual({
      date: '2027-03-01',
      grossAmountMinor: 125,
    });
  });

  it('refuses an amount with more decimals than the payment currency', () => {
    const event = anEvent('order.installment_added', installmentAddedData({ amount: '10.5' }));
    expect(() => mapInstallmentAdded(event.data, 'JPY')).toThrow(
      'amount has more decimals than JPY allows (0)',
    );
  });
});
