import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  currencyExponent,
  formatMinorUnits,
  minorUnitsToJsonNumber,
  multiplyDecimal,
  parseDecimal,
  roundDecimal,
  sumMinor,
  toMinorUnits,
} from './money.js';

describe('money', () => {
  it('knows ISO 4217 exponents', () => {
    expect(currencyExponent('NOK')).toBe(2);
    expect(currencyExponent('JPY')).toBe(0);
    expect(currencyExponent('KWD')).toBe(3);
    expect(() => currencyExponent('XAU')).toThrow(/unknown ISO 4217 currency/);
    expect(() => currencyExponent('ABC')).toThrow(/unknown ISO 4217 currency/);
  });

  it('converts decimal text and JSON numbers to minor units exactly', () => {
    expect(toMinorUnits('1249.50', 'NOK')).toBe(124950);
    expect(toMinorUnits(1249.5, 'NOK')).toBe(124950);
    expect(toMinorUnits(0.3, 'NOK')).toBe(30);
    expect(toMinorUnits('1249.500', 'NOK')).toBe(124950);
    expect(toMinorUnits('-3', 'NOK')).toBe(-300);
    expect(toMinorUnits('1e2', 'JPY')).toBe(100);
    expect(toMinorUnits('12.345', 'KWD')).toBe(12345);
  });

  it('refuses more decimals than the currency has, and non-numbers', () => {
    expect(() => toMinorUnits('1249.505', 'NOK')).toThrow(/more decimals than NOK allows/);
    expect(() => toMinorUnits('1.5', 'JPY')).toThrow(/more decimals/);
    // A float sum that is not the decimal it looks like is refused, not rounded.
    expect(() => toMinorUnits(0.1 + 0.2, 'NOK')).toThrow(/more decimals/);
    expect(() => toMinorUnits('12,50', 'NOK')).toThrow(/not a decimal number/);
    expect(() => toMinorUnits(Number.NaN, 'NOK')).toThrow(/not finite/);
    expect(() => toMinorUnits('1e30', 'NOK')).toThrow(/too large/);
  });

  it('formats minor units with the currency decimals', () => {
    expect(formatMinorUnits(124950, 'NOK')).toBe('1249.50');
    expect(formatMinorUnits(5, 'NOK')).toBe('0.05');
    expect(formatMinorUnits(-5, 'NOK')).toBe('-0.05');
    expect(formatMinorUnits(100, 'JPY')).toBe('100');
    expect(formatMinorUnits(1, 'KWD')).toBe('0.001');
    expect(() => formatMinorUnits(1.5, 'NOK')).toThrow(/not an integer/);
  });

  it('formats bigint minor units exactly, beyond what a float holds', () => {
    expect(formatMinorUnits(124950n, 'NOK')).toBe('1249.50');
    expect(formatMinorUnits(-5n, 'NOK')).toBe('-0.05');
    expect(formatMinorUnits(0n, 'JPY')).toBe('0');
    // 2^63 - 1 öre: a BIGINT column's largest value; Number() would have rounded it.
    expect(formatMinorUnits(9223372036854775807n, 'NOK')).toBe('92233720368547758.07');
  });

  it('rounds half away from zero', () => {
    expect(roundDecimal(parseDecimal('0.125'), 2)).toBe(13n);
    expect(roundDecimal(parseDecimal('0.124'), 2)).toBe(12n);
    expect(roundDecimal(parseDecimal('-0.125'), 2)).toBe(-13n);
    expect(roundDecimal(multiplyDecimal(parseDecimal('99.99'), parseDecimal('1.25')), 2)).toBe(
      12499n,
    );
  });

  it('sums minor units without float error', () => {
    expect(sumMinor([10, 20])).toBe(30);
    expect(() => sumMinor([0.1, 0.2])).toThrow(/not an integer/);
  });

  it('round-trips minor units through the JSON number Payflow sees', () => {
    for (const currency of ['NOK', 'JPY', 'KWD']) {
      fc.assert(
        fc.property(fc.integer({ min: -1e12, max: 1e12 }), (minor) => {
          const wire = JSON.parse(
            JSON.stringify({ amount: minorUnitsToJsonNumber(minor, currency) }),
          ) as {
            amount: number;
          };
          expect(toMinorUnits(wire.amount, currency)).toBe(minor);
        }),
      );
    }
  });
});
