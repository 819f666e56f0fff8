import { describe, expect, it } from '@jest/globals';
import { anEvent, installmentChangedData } from '../../../test/support/builders.js';
import { mapInstallmentChanged } from './installment-changed.mapping.js';

describe('mapInstallmentChanged', () => {
  it('sends only the fields that change', () => {
    const only = (overrides: Parameters<typeof installmentChangedData>[0]) =>
      mapInstallmentChanged(
        anEvent('order.installment_changed', {
          installmentRef: '2',
          ...overrides,
        }).data,
        'NOK',
      );
    expect(only({ date: '2027-05-01' })).toEqual({ date: '2027-05-01' });
    expect(only({ amount: '99.90' })).toEqual({ grossAmountMinor: 9990 });
    expect(
      only({ lines: [{ description: 'a', quantity: 1, unitPriceNet: '8', taxRate: 25 }] }),
    ).toEqual({
      items: [expect.objectContaining({ grossTotalPriceMinor: 1000, netTotalPriceMinor: 800 })],
    });
  });

  it('refuses an amount with too many decimals', () => {
    const event = anEvent('order.installment_changed', installmentChangedData({ amount: '1.234' }));
    expect(() => mapInstallmentChanged(event.data, 'NOK')).toThrow(/amount has more decimals/);
  });
});
