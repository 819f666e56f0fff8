/**
 * What the acquirer keeps of each settlement line (docs/assumptions.md, settlement fees):
 * a rate in basis points of the gross plus a fixed part, by how the money was collected.
 * Computed on integer minor units with BigInt: rate × gross / 10,000, rounded half away
 * from zero, plus the fixed part. A refund line gives back the rate part of its method (a
 * negative fee); the fixed part is not given back.
 */
import { roundDecimal, toMinorUnits } from '../../money/money.js';

/** How the money of a line was collected, which decides its fee. */
export const FEE_METHODS = ['card', 'invoice', 'installment', 'direct_debit', 'seeded'] as const;
export type FeeMethod = (typeof FEE_METHODS)[number];

export interface FeeRule {
  /** Rate in basis points (1/100 of a percent) of the gross. */
  readonly basisPoints: number;
  /** Fixed part per payment line, in major units of the line's currency (exact decimal text). */
  readonly fixed: string;
}

/**
 * card: a payment without installments paid by its link or at a terminal. invoice: one
 * paid by invoice. installment: an installment the payer paid (the `initial` one). direct
 * debit: a `scheduled` installment debited on its date. seeded: a row of POST
 * /sandbox/settlements that names no method (the sandbox's former flat 1.5 %).
 */
export const FEE_TABLE: Readonly<Record<FeeMethod, FeeRule>> = {
  card: { basisPoints: 140, fixed: '1.00' },
  invoice: { basisPoints: 250, fixed: '0' },
  installment: { basisPoints: 290, fixed: '0' },
  direct_debit: { basisPoints: 0, fixed: '2.00' },
  seeded: { basisPoints: 150, fixed: '0' },
};

/** basisPoints × grossMinor / 10,000, rounded half away from zero, in minor units. */
export function rateFeeMinor(grossMinor: number, basisPoints: number): number {
  if (!Number.isSafeInteger(grossMinor) || !Number.isSafeInteger(basisPoints)) {
    throw new RangeError('amounts and rates are integers');
  }
  return Number(roundDecimal({ digits: BigInt(grossMinor) * BigInt(basisPoints), scale: 4 }, 0));
}

/**
 * The fee of a line of `grossMinor` (negative for a refund) in `currency`: the rate part,
 * plus the fixed part on a payment line only.
 */
export function feeMinor(
  grossMinor: number,
  currency: string,
  method: FeeMethod,
  type: 'payment' | 'refund',
): number {
  const rule = FEE_TABLE[method];
  const rate = rateFeeMinor(grossMinor, rule.basisPoints);
  if (type === 'refund' || rule.fixed === '0') return rate;
  return rate + toMinorUnits(rule.fixed, currency);
}
