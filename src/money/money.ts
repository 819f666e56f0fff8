/**
 * Money inside payflow-bridge is an integer count of the currency's minor units.
 * Decimal text (from ERP events and Payflow's JSON numbers) is converted exactly, with
 * BigInt arithmetic; amounts are never added or multiplied as floating point numbers.
 */
import { ValidationError } from '../errors/app-error.js';

/** ISO 4217 minor-unit exponents that differ from 2. */
const EXPONENT_EXCEPTIONS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** Codes without minor units in ISO 4217 (precious metals, testing, SDR): not money we collect. */
const NOT_TENDER = new Set([
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XTS',
  'XUA',
  'XXX',
]);

const KNOWN_CURRENCIES: ReadonlySet<string> = new Set(
  [...Intl.supportedValuesOf('currency'), ...Object.keys(EXPONENT_EXCEPTIONS)].filter(
    (code) => !NOT_TENDER.has(code),
  ),
);

export function isCurrency(code: string): boolean {
  return KNOWN_CURRENCIES.has(code);
}

/** Number of decimals of a currency's minor unit (NOK 2, JPY 0, KWD 3). */
export function currencyExponent(currency: string): number {
  if (!isCurrency(currency)) {
    throw new ValidationError('MONEY.UNKNOWN_CURRENCY', `unknown ISO 4217 currency "${currency}"`, {
      metadata: { currency },
    });
  }
  return EXPONENT_EXCEPTIONS[currency] ?? 2;
}

/** An exact decimal: value = digits × 10^-scale. */
export interface Decimal {
  readonly digits: bigint;
  readonly scale: number;
}

const DECIMAL_TEXT = /^([+-])?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Parses decimal text ("1249.50", "-3", "1e2") or a finite JSON number exactly.
 * A number is read through its shortest round-trip text, which is what JSON carried.
 */
export function parseDecimal(input: string | number): Decimal {
  if (typeof input === 'number' && !Number.isFinite(input)) {
    throw new ValidationError('MONEY.INVALID_AMOUNT', `amount ${String(input)} is not finite`);
  }
  const text = typeof input === 'number' ? String(input) : input.trim();
  const match = DECIMAL_TEXT.exec(text);
  if (!match) {
    throw new ValidationError('MONEY.INVALID_AMOUNT', `"${text}" is not a decimal number`);
  }
  const [, sign, whole = '0', fraction = '', exponentText] = match;
  const exponent = exponentText === undefined ? 0 : Number(exponentText);
  if (Math.abs(exponent) > 100) {
    throw new ValidationError('MONEY.INVALID_AMOUNT', `"${text}" is out of range`);
  }
  let digits = BigInt(whole + fraction);
  let scale = fraction.length - exponent;
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits: sign === '-' ? -digits : digits, scale };
}

export function multiplyDecimal(a: Decimal, b: Decimal): Decimal {
  return { digits: a.digits * b.digits, scale: a.scale + b.scale };
}

/** Rounds to `scale` decimals, half away from zero (commercial rounding). */
export function roundDecimal(value: Decimal, scale: number): bigint {
  if (value.scale <= scale) return value.digits * 10n ** BigInt(scale - value.scale);
  const divisor = 10n ** BigInt(value.scale - scale);
  const negative = value.digits < 0n;
  const magnitude = negative ? -value.digits : value.digits;
  const quotient = magnitude / divisor;
  const remainder = magnitude % divisor;
  const rounded = remainder * 2n >= divisor ? quotient + 1n : quotient;
  return negative ? -rounded : rounded;
}

function toSafeInteger(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new ValidationError('MONEY.OUT_OF_RANGE', `${what} is too large`);
  }
  return Number(value);
}

/**
 * Converts a major-unit amount ("1249.50" or 1249.5) to minor units of `currency`.
 * More decimals than the currency has is an error, never a silent rounding.
 */
export function toMinorUnits(amount: string | number, currency: string): number {
  const exponent = currencyExponent(currency);
  const value = parseDecimal(amount);
  if (value.scale > exponent && value.digits % 10n ** BigInt(value.scale - exponent) !== 0n) {
    throw new ValidationError(
      'MONEY.TOO_MANY_DECIMALS',
      `${String(amount)} has more decimals than ${currency} allows (${exponent})`,
      { metadata: { currency } },
    );
  }
  const minor = roundDecimal(value, exponent);
  return toSafeInteger(minor, `amount ${String(amount)}`);
}

/** Formats minor units as exact decimal text with the currency's decimals ("1249.50"). */
export function formatMinorUnits(minor: number | bigint, currency: string): string {
  if (typeof minor === 'number' && !Number.isSafeInteger(minor)) {
    throw new ValidationError(
      'MONEY.NOT_MINOR_UNITS',
      `${minor} is not an integer amount of minor units`,
    );
  }
  const exponent = currencyExponent(currency);
  const negative = minor < 0;
  // A bigint (a BIGINT column) is formatted as it is: no detour through a float.
  const text = (negative ? -BigInt(minor) : BigInt(minor)).toString().padStart(exponent + 1, '0');
  const whole = text.slice(0, text.length - exponent);
  const fraction = exponent > 0 ? `.${text.slice(text.length - exponent)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/**
 * Minor units to the JSON number Payflow expects. The number is produced by parsing the
 * exact decimal text, so it is the closest double to the amount and JSON prints it back
 * as that same text (1249.5 for "1249.50").
 */
export function minorUnitsToJsonNumber(minor: number, currency: string): number {
  return Number(formatMinorUnits(minor, currency));
}

/** Sums integer minor units, refusing anything that is not a safe integer. */
export function sumMinor(values: readonly number[]): number {
  let total = 0n;
  for (const value of values) {
    if (!Number.isSafeInteger(value)) {
      throw new ValidationError(
        'MONEY.NOT_MINOR_UNITS',
        `${value} is not an integer amount of minor units`,
      );
    }
    total += BigInt(value);
  }
  return toSafeInteger(total, 'sum');
}
