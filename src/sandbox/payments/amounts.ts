/**
 * Amount and date checks of request bodies, on exact decimals (src/money/money.ts):
 * JSON numbers in major units become integer minor units, and an amount with more
 * decimals than the currency allows is a 422 `value_error.decimal_places`.
 */
import { ValidationError } from '../../errors/app-error.js';
import {
  currencyExponent,
  multiplyDecimal,
  parseDecimal,
  roundDecimal,
  toMinorUnits,
} from '../../money/money.js';
import type { PayflowItem } from '../../payflow/wire/payflow.schemas.js';
import { startOfUtcDate } from '../state/clock.js';
import type { Detail, Loc } from '../http/errors.js';

export type Sign = 'any' | 'positive' | 'non-negative';

/** Collects amount problems of one request as 422 detail entries. */
export class AmountReader {
  readonly issues: Detail[] = [];
  readonly exponent: number;

  constructor(readonly currency: string) {
    this.exponent = currencyExponent(currency);
  }

  /** Minor units of `value`, or 0 after recording an issue at `loc`. */
  minor(value: number, loc: Loc, sign: Sign = 'any'): number {
    let minor: number;
    try {
      minor = toMinorUnits(value, this.currency);
    } catch (error) {
      const tooMany = error instanceof ValidationError && error.code === 'MONEY.TOO_MANY_DECIMALS';
      this.issues.push({
        loc,
        msg: tooMany
          ? `${value} has more decimals than ${this.currency} allows (${this.exponent})`
          : `${value} is not a valid amount`,
        type: tooMany ? 'value_error.decimal_places' : 'value_error.number',
      });
      return 0;
    }
    if (sign === 'positive' && minor <= 0) {
      this.issues.push({ loc, msg: 'must be greater than 0', type: 'value_error.number.not_gt' });
    } else if (sign === 'non-negative' && minor < 0) {
      this.issues.push({ loc, msg: 'must not be negative', type: 'value_error.number.not_ge' });
    }
    return minor;
  }

  optionalMinor(value: number | null | undefined, loc: Loc): number | undefined {
    return value === undefined || value === null ? undefined : this.minor(value, loc);
  }

  /** Checks the amounts of every item; returns each item's gross and net totals in minor units. */
  items(items: readonly PayflowItem[], loc: Loc): { gross: number; net: number }[] {
    return items.map((item, index) => {
      const at = (field: string): Loc => [...loc, index, field];
      const grossUnit = this.optionalMinor(item.grossUnitPrice, at('grossUnitPrice'));
      const netUnit = this.optionalMinor(item.netUnitPrice, at('netUnitPrice'));
      const grossTotal = this.optionalMinor(item.grossTotalPrice, at('grossTotalPrice'));
      const netTotal = this.optionalMinor(item.netTotalPrice, at('netTotalPrice'));
      this.optionalMinor(item.vatAmount, at('vatAmount'));
      return {
        gross: grossTotal ?? this.times(grossUnit, item.quantity, at('quantity')),
        net: netTotal ?? this.times(netUnit, item.quantity, at('quantity')),
      };
    });
  }

  date(value: string, loc: Loc): void {
    if (startOfUtcDate(value) === undefined) {
      this.issues.push({ loc, msg: `${value} is not a calendar date`, type: 'value_error.date' });
    }
  }

  /**
   * unit price × quantity (default 1), rounded half away from zero to the minor unit; 0
   * after recording an issue at `loc` when the product is not a safe integer (a quantity
   * of 1e21 or more, for example), which no amount of minor units can be.
   */
  private times(unitMinor: number | undefined, quantity: number | undefined, loc: Loc): number {
    if (unitMinor === undefined) return 0;
    if (quantity === undefined) return unitMinor;
    let minor: number | undefined;
    try {
      const product = multiplyDecimal(
        { digits: BigInt(unitMinor), scale: 0 },
        parseDecimal(quantity),
      );
      minor = Number(roundDecimal(product, 0));
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
    }
    if (minor !== undefined && Number.isSafeInteger(minor)) return minor;
    if (!this.issues.some((issue) => sameLoc(issue.loc, loc))) {
      this.issues.push({
        loc,
        msg: `${quantity} is out of range: the item total cannot be priced`,
        type: 'value_error.number',
      });
    }
    return 0;
  }
}

/**
 * Whether minor-unit amounts add up to `expected`, exactly: in BigInt, so that a sum past
 * Number.MAX_SAFE_INTEGER is a mismatch (422), never a thrown range error (500).
 */
export function sumsTo(values: readonly number[], expected: number): boolean {
  let total = 0n;
  for (const value of values) total += BigInt(value);
  return total === BigInt(expected);
}

function sameLoc(a: Loc, b: Loc): boolean {
  return a.length === b.length && a.every((key, index) => key === b[index]);
}
