import { describe, expect, it } from '@jest/globals';
import { MappingFailedError } from '../../errors/dead-letter.errors.js';
import {
  addMonthsClamped,
  amountToMinor,
  lineTotals,
  mapLine,
  toPaymentItem,
} from './order-amounts.js';

describe('order amounts', () => {
  it('computes a line exactly and rounds each total once', () => {
    // 3 × 33.33 = 99.99 net; × 1.25 = 124.9875 → 124.99 gross; VAT 25.00.
    const line = mapLine(
      { description: 'Oil', quantity: 3, unitPriceNet: '33.33', taxRate: 25 },
      'NOK',
      'lines[0]',
    );
    expect(line).toMatchObject({
      netUnitPriceMinor: 3333,
      grossUnitPriceMinor: 4166, // 41.6625 → 41.66
      netTotalMinor: 9999,
      grossTotalMinor: 12499,
      vatMinor: 2500,
      quantity: 3,
      taxRate: 25,
      discountRate: 0,
      lineType: 'regular',
    });
  });

  it('applies the discount before VAT, from the exact net', () => {
    // 2 × 100.00 × (1 − 12.5 %) = 175.00 net; × 1.209 = 211.575 → 211.58 (half away from zero).
    const line = mapLine(
      {
        description: 'Tyres',
        quantity: '2',
        unitPriceNet: 100,
        taxRate: '20.9',
        discountRate: '12.5',
        lineType: 'part-sum',
      },
      'NOK',
      'lines[1]',
    );
    expect(line.netTotalMinor).toBe(17500);
    expect(line.grossTotalMinor).toBe(21158);
    expect(line.vatMinor).toBe(3658);
    expect(line.netUnitPriceMinor).toBe(10000);
    expect(line.grossUnitPriceMinor).toBe(12090);
    expect(line.lineType).toBe('part-sum');
  });

  it('rounds half away from zero for negative lines too', () => {
    // −0.05 × 1.5 = −0.075 → −0.08; × 1.25 = −0.09375 → −0.09.
    const line = mapLine(
      { description: 'Rebate', quantity: '1.5', unitPriceNet: '-0.05', taxRate: 25 },
      'NOK',
      'lines[0]',
    );
    expect(line.netTotalMinor).toBe(-8);
    expect(line.grossTotalMinor).toBe(-9);
    expect(line.vatMinor).toBe(-1);
  });

  it('uses the currency minor unit (JPY 0, KWD 3 decimals)', () => {
    const yen = mapLine(
      { description: 'x', quantity: 3, unitPriceNet: 333, taxRate: 10 },
      'JPY',
      'l',
    );
    expect(yen).toMatchObject({ netTotalMinor: 999, grossTotalMinor: 1099, vatMinor: 100 });
    const dinar = mapLine(
      { description: 'x', quantity: 1, unitPriceNet: '1.005', taxRate: 5 },
      'KWD',
      'l',
    );
    expect(dinar).toMatchObject({ netTotalMinor: 1005, grossTotalMinor: 1055, vatMinor: 50 });
  });

  it('refuses amounts with more decimals than the currency, naming the field', () => {
    const attempt = (): unknown =>
      mapLine(
        { description: 'x', quantity: 1, unitPriceNet: '10.125', taxRate: 25 },
        'NOK',
        'lines[3]',
      );
    expect(attempt).toThrow(MappingFailedError);
    expect(attempt).toThrow('lines[3].unitPriceNet has more decimals than NOK allows (2)');
    expect(() => amountToMinor('1.5', 'JPY', 'amount')).toThrow(
      /amount has more decimals than JPY/,
    );
    expect(() => amountToMinor(0.1 + 0.2, 'NOK', 'amount')).toThrow(MappingFailedError);
  });

  it('refuses totals a JSON number cannot carry exactly', () => {
    expect(() =>
      mapLine(
        { description: 'x', quantity: 1000, unitPriceNet: '99999999999999.00', taxRate: 0 },
        'NOK',
        'lines[0]',
      ),
    ).toThrow(/too large/);
  });

  it('sums lines and sends every amount field', () => {
    const lines = [
      mapLine({ description: 'a', quantity: 1, unitPriceNet: '10.00', taxRate: 25 }, 'NOK', 'a'),
      mapLine({ description: 'b', quantity: 2, unitPriceNet: '0.99', taxRate: 15 }, 'NOK', 'b'),
    ];
    expect(lineTotals(lines)).toEqual({ netMinor: 1198, grossMinor: 1478, vatMinor: 280 });
    expect(toPaymentItem(lines[1]!)).toEqual({
      description: 'b',
      quantity: 2,
      taxRate: 15,
      discountRate: 0,
      lineType: 'regular',
      netUnitPriceMinor: 99,
      grossUnitPriceMinor: 114,
      netTotalPriceMinor: 198,
      grossTotalPriceMinor: 228,
      vatAmountMinor: 30,
    });
  });

  it('adds months, clamping to the last day of the month', () => {
    expect(addMonthsClamped('2026-01-31', 0)).toBe('2026-01-31');
    expect(addMonthsClamped('2026-01-31', 1)).toBe('2026-02-28');
    expect(addMonthsClamped('2028-01-31', 1)).toBe('2028-02-29');
    expect(addMonthsClamped('2026-01-31', 2)).toBe('2026-03-31');
    expect(addMonthsClamped('2026-03-31', 1)).toBe('2026-04-30');
    expect(addMonthsClamped('2026-11-15', 3)).toBe('2027-02-15');
    expect(addMonthsClamped('2026-12-31', 12)).toBe('2027-12-31');
  });
});
