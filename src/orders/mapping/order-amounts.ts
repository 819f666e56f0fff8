/**
 * Money of order events, computed exactly (src/money/money.ts, BigInt decimals) into
 * integer minor units (CONTRACT §2):
 *
 *   net total   = unitPriceNet × quantity × (1 − discountRate/100)
 *   gross total = net total × (1 + taxRate/100)
 *   vatAmount   = gross total − net total
 *
 * Each total is computed from the exact inputs and rounded once, half away from zero, to
 * the currency's minor unit. Unit prices are the list prices before the discount (the
 * discount travels as `discountRate`): netUnitPrice = unitPriceNet, grossUnitPrice =
 * unitPriceNet × (1 + taxRate/100) rounded the same way.
 */
import {
  currencyExponent,
  multiplyDecimal,
  parseDecimal,
  roundDecimal,
  toMinorUnits,
  type Decimal,
} from '../../money/money.js';
import { ValidationError } from '../../errors/app-error.js';
import { MappingFailedError } from '../../errors/dead-letter.errors.js';
import { MAX_EXACT_MINOR_UNITS } from '../../payflow/wire/payflow.mapping.js';
import type { PaymentItemInput } from '../../payflow/payflow.types.js';
import type { Amount } from '../../events/order-event.schema.js';

export type LineType = 'regular' | 'shipping' | 'part-sum';

/** A line as the events carry it (payment, installment and refund lines). */
export interface AmountLine {
  readonly description: string;
  readonly quantity: Amount;
  readonly unitPriceNet: Amount;
  readonly taxRate: Amount;
  readonly discountRate?: Amount;
  readonly lineType?: LineType;
}

/** A line in minor units, ready for Payflow. */
export interface MappedLine {
  readonly description: string;
  readonly quantity: number;
  readonly taxRate: number;
  readonly discountRate: number;
  readonly lineType: LineType;
  readonly netUnitPriceMinor: number;
  readonly grossUnitPriceMinor: number;
  readonly netTotalMinor: number;
  readonly grossTotalMinor: number;
  readonly vatMinor: number;
}

export interface LineTotals {
  readonly netMinor: number;
  readonly grossMinor: number;
  readonly vatMinor: number;
}

export function mappingFailed(code: string, message: string, cause?: unknown): MappingFailedError {
  return new MappingFailedError(code, message, cause === undefined ? {} : { cause });
}

/** Refuses minor-unit amounts that a JSON number cannot carry exactly. */
export function checkedMinor(value: bigint, field: string): number {
  if (value > BigInt(MAX_EXACT_MINOR_UNITS) || value < -BigInt(MAX_EXACT_MINOR_UNITS)) {
    throw mappingFailed('ORDER.AMOUNT_TOO_LARGE', `${field} is too large to send exactly`);
  }
  return Number(value);
}

/** An event amount in minor units; more decimals than the currency has is mapping_failed. */
export function amountToMinor(value: Amount, currency: string, field: string): number {
  let minor: number;
  try {
    minor = toMinorUnits(value, currency);
  } catch (error) {
    if (error instanceof ValidationError && error.code === 'MONEY.TOO_MANY_DECIMALS') {
      throw mappingFailed(
        'ORDER.TOO_MANY_DECIMALS',
        `${field} has more decimals than ${currency} allows (${currencyExponent(currency)})`,
        error,
      );
    }
    if (error instanceof ValidationError && error.code === 'MONEY.OUT_OF_RANGE') {
      throw mappingFailed('ORDER.AMOUNT_TOO_LARGE', `${field} is too large`, error);
    }
    throw mappingFailed('ORDER.INVALID_AMOUNT', `${field} is not a usable amount`, error);
  }
  return checkedMinor(BigInt(minor), field);
}

/** (100 + sign × rate) / 100 as an exact decimal. */
function percentFactor(rate: Decimal, sign: 1n | -1n): Decimal {
  const hundred = 100n * 10n ** BigInt(rate.scale);
  return { digits: hundred + sign * rate.digits, scale: rate.scale + 2 };
}

function decimalOf(value: Amount): Decimal {
  return parseDecimal(value);
}

/** Maps one line; `field` names it in errors (e.g. `lines[2]`). */
export function mapLine(line: AmountLine, currency: string, field: string): MappedLine {
  const exponent = currencyExponent(currency);
  // The unit price is money: no more decimals than the currency has.
  const netUnitPriceMinor = amountToMinor(line.unitPriceNet, currency, `${field}.unitPriceNet`);
  const unitPrice = decimalOf(line.unitPriceNet);
  const quantity = decimalOf(line.quantity);
  const taxRate = decimalOf(line.taxRate);
  const discountRate = decimalOf(line.discountRate ?? 0);
  const taxFactor = percentFactor(taxRate, 1n);
  const netExact = multiplyDecimal(
    multiplyDecimal(unitPrice, quantity),
    percentFactor(discountRate, -1n),
  );
  const grossExact = multiplyDecimal(netExact, taxFactor);
  const netTotalMinor = checkedMinor(roundDecimal(netExact, exponent), `${field} net total`);
  const grossTotalMinor = checkedMinor(roundDecimal(grossExact, exponent), `${field} gross total`);
  const grossUnitPriceMinor = checkedMinor(
    roundDecimal(multiplyDecimal(unitPrice, taxFactor), exponent),
    `${field} gross unit price`,
  );
  return {
    description: line.description,
    quantity: Number(line.quantity),
    taxRate: Number(line.taxRate),
    discountRate: Number(line.discountRate ?? 0),
    lineType: line.lineType ?? 'regular',
    netUnitPriceMinor,
    grossUnitPriceMinor,
    netTotalMinor,
    grossTotalMinor,
    vatMinor: grossTotalMinor - netTotalMinor,
  };
}

export function mapLines(
  lines: readonly AmountLine[],
  currency: string,
  field = 'lines',
): MappedLine[] {
  return lines.map((line, index) => mapLine(line, currency, `${field}[${index}]`));
}

/** Sums of the lines' totals (exact: BigInt, then checked). */
export function lineTotals(lines: readonly MappedLine[], field = 'lines'): LineTotals {
  let net = 0n;
  let gross = 0n;
  for (const line of lines) {
    net += BigInt(line.netTotalMinor);
    gross += BigInt(line.grossTotalMinor);
  }
  const netMinor = checkedMinor(net, `${field} net total`);
  const grossMinor = checkedMinor(gross, `${field} gross total`);
  return { netMinor, grossMinor, vatMinor: grossMinor - netMinor };
}

/** The Payflow item of a mapped line (all amount fields sent). */
export function toPaymentItem(line: MappedLine): PaymentItemInput {
  return {
    description: line.description,
    quantity: line.quantity,
    taxRate: line.taxRate,
    discountRate: line.discountRate,
    lineType: line.lineType,
    netUnitPriceMinor: line.netUnitPriceMinor,
    grossUnitPriceMinor: line.grossUnitPriceMinor,
    netTotalPriceMinor: line.netTotalMinor,
    grossTotalPriceMinor: line.grossTotalMinor,
    vatAmountMinor: line.vatMinor,
  };
}

/**
 * `date` (YYYY-MM-DD) plus `months`, on the same day of the month, or the month's last day
 * when it has fewer days (Jan 31 + 1 month = Feb 28/29).
 */
export function addMonthsClamped(date: string, months: number): string {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const monthIndex = year * 12 + (month - 1) + months;
  const targetYear = Math.floor(monthIndex / 12);
  const targetMonth = monthIndex - targetYear * 12; // 0-based
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  const targetDay = Math.min(day, lastDay);
  const pad = (value: number, width: number): string => String(value).padStart(width, '0');
  return `${pad(targetYear, 4)}-${pad(targetMonth + 1, 2)}-${pad(targetDay, 2)}`;
}
