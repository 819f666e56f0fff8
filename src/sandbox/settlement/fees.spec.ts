import { describe, expect, it } from '@jest/globals';
import { FEE_TABLE, feeMinor, rateFeeMinor } from './fees.js';

describe('settlement fees', () => {
  it('takes basis points of the gross, rounded half away from zero, in minor units', () => {
    // 1.40 % of 1249.50 = 17.493 → 17.49
    expect(rateFeeMinor(124_950, 140)).toBe(1749);
    // 1.40 % of 0.25 = 0.0035 → 0.00; of 0.75 = 0.0105 → 0.01
    expect(rateFeeMinor(25, 140)).toBe(0);
    expect(rateFeeMinor(75, 140)).toBe(1);
    // 2.50 % of 0.02 is 0.05 of a minor unit → 0; exactly half a minor unit goes away
    // from zero: 1.50 % of ±1.00 = ±0.015 → ±0.02, 1 % of 0.50 = 0.005 → 0.01
    expect(rateFeeMinor(2, 250)).toBe(0);
    expect(rateFeeMinor(100, 150)).toBe(2);
    expect(rateFeeMinor(-100, 150)).toBe(-2);
    expect(rateFeeMinor(50, 100)).toBe(1);
    expect(rateFeeMinor(-50, 100)).toBe(-1);
    expect(rateFeeMinor(49, 100)).toBe(0);
    expect(rateFeeMinor(0, 290)).toBe(0);
    expect(Object.is(rateFeeMinor(-1, 0), 0)).toBe(true);
  });

  it('is exact far beyond what a double holds', () => {
    // 9,007,199,254,740,991 × 290 / 10,000 = 261,208,778,387,488.739 → …489
    expect(rateFeeMinor(Number.MAX_SAFE_INTEGER, 290)).toBe(261_208_778_387_489);
    expect(() => rateFeeMinor(0.5, 140)).toThrow(RangeError);
  });

  it('charges each payment method its rate and fixed part', () => {
    expect(FEE_TABLE).toEqual({
      card: { basisPoints: 140, fixed: '1.00' },
      invoice: { basisPoints: 250, fixed: '0' },
      installment: { basisPoints: 290, fixed: '0' },
      direct_debit: { basisPoints: 0, fixed: '2.00' },
      seeded: { basisPoints: 150, fixed: '0' },
    });
    expect(feeMinor(124_950, 'NOK', 'card', 'payment')).toBe(1749 + 100);
    expect(feeMinor(124_950, 'NOK', 'invoice', 'payment')).toBe(3124); // 31.2375
    expect(feeMinor(40_000, 'NOK', 'installment', 'payment')).toBe(1160);
    expect(feeMinor(40_000, 'NOK', 'direct_debit', 'payment')).toBe(200);
    expect(feeMinor(1050, 'NOK', 'seeded', 'payment')).toBe(16); // 0.1575
  });

  it('gives the rate part back on a refund, never the fixed part', () => {
    expect(feeMinor(-10_010, 'NOK', 'card', 'refund')).toBe(-140); // -1.4014
    expect(feeMinor(-10_000, 'NOK', 'installment', 'refund')).toBe(-290);
    expect(feeMinor(-10_000, 'NOK', 'direct_debit', 'refund')).toBe(0);
    expect(feeMinor(-1230, 'NOK', 'seeded', 'refund')).toBe(-18); // -0.1845
  });

  it('takes the fixed part in the currency’s own minor units', () => {
    expect(feeMinor(100_000, 'JPY', 'card', 'payment')).toBe(1400 + 1);
    expect(feeMinor(1_000_000, 'KWD', 'direct_debit', 'payment')).toBe(2000);
    expect(feeMinor(1_000_000, 'KWD', 'card', 'payment')).toBe(14_000 + 1000);
  });
});
