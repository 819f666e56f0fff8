/**
 * Amount and date checks of request bodies, on exact decimals (src/common/money.ts):
 * JSON numbers in major units become integer minor units, and an amount with more
 * decimals than the currency allows is a 422 `value_error.decimal_places`.
 */
import { ValidationError } from '../common/app-error.js';
import {
  currencyExponent,
  multiplyDecimal,
  parseDecimal,
  roundDecimal,
  toMinorUnits,
} from '../common/money.js';
import type { PayflowItem } from '../payflow/payflow.schemas.js';
import { startOfUtcDate } from './clock.js';
import type { Detail, Loc } from './errors.js';

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
        gross: grossTotal ?? this.times(grossUnit, item.quantity),
        net: netTotal ?? this.times(netUnit, item.quantity),
      };
    });
  }

  date(value: string, loc: Loc): void {
    if (startOfUtcDate(value) === undefined) {
      this.issues.push({ loc, msg: `${value} is not a calendar date`, type: 'value_error.date' });
    }
  }

  /** unit price × quantity (default 1), rounded half away from zero to the minor unit. */
  private times(unitMinor: number | undefined, quantity: number | undefined): number {
    if (unitMinor === undefined) return 0;
    if (quantity === undefined) return unitMinor;
    const product = multiplyDecimal(
      { digits: BigInt(unitMinor), scale: 0 },
      parseDecimal(quantity),
    );
    return Number(roundDecimal(product, 0));
  }
}
