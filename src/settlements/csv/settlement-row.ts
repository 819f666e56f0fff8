/**
 * One row of the standard settlement CSV (columns in docs/assumptions.md), checked and
 * turned into a typed line with money in integer minor units. Every amount must have the
 * currency's decimals at most, and net must equal gross minus fee exactly: a row that does
 * not add up is reported, never published.
 */
import { z } from 'zod';
import { describeError } from '../../errors/app-error.js';
import { isCurrency, toMinorUnits } from '../../money/money.js';
import { SETTLEMENT_CSV_COLUMNS } from '../../payflow/wire/payflow.schemas.js';
import { isIsoDate } from '../../timing/calendar.js';

export type SettlementColumn = (typeof SETTLEMENT_CSV_COLUMNS)[number];

export interface SettlementLine {
  readonly settlementId: string;
  readonly settlementDate: string;
  readonly organizationId: string;
  /** Payflow's payment id, or null for a row that belongs to no payment. */
  readonly paymentId: string | null;
  readonly paymentNumber: number | null;
  readonly installmentId: string | null;
  readonly internalRef: string | null;
  readonly orderNumber: string | null;
  readonly transactionType: string;
  readonly currency: string;
  readonly grossMinor: number;
  readonly feeMinor: number;
  readonly netMinor: number;
  readonly bookedAt: string;
}

const text = z.string().trim();
const required = text.min(1, { message: 'is empty' });
const optional = text.transform((value) => (value === '' ? null : value));
const decimal = text.regex(/^-?\d+(\.\d+)?$/, { message: 'is not a decimal amount' });

const rowSchema = z
  .object({
    settlement_id: required,
    settlement_date: text.refine(isIsoDate, { message: 'is not a YYYY-MM-DD date' }),
    organization_id: required,
    payment_id: optional,
    payment_number: text
      .regex(/^\d*$/, { message: 'is not a whole number' })
      .transform((value) => (value === '' ? null : Number(value))),
    installment_id: optional,
    internal_ref: optional,
    order_number: optional,
    transaction_type: required,
    currency: text
      .transform((value) => value.toUpperCase())
      .refine(isCurrency, { message: 'is not an ISO 4217 currency' }),
    gross_amount: decimal,
    fee_amount: decimal,
    net_amount: decimal,
    booked_at: text.refine((value) => !Number.isNaN(Date.parse(value)) && /T/.test(value), {
      message: 'is not an ISO 8601 time',
    }),
  })
  .transform((row, ctx): SettlementLine | typeof z.NEVER => {
    const amounts: Partial<Record<'gross' | 'fee' | 'net', number>> = {};
    for (const [name, column] of [
      ['gross', 'gross_amount'],
      ['fee', 'fee_amount'],
      ['net', 'net_amount'],
    ] as const) {
      try {
        amounts[name] = toMinorUnits(row[column], row.currency);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: [column], message: describeError(error) });
        return z.NEVER;
      }
    }
    const { gross = 0, fee = 0, net = 0 } = amounts;
    if (gross - fee !== net) {
      ctx.addIssue({
        code: 'custom',
        path: ['net_amount'],
        message: 'is not gross_amount minus fee_amount',
      });
      return z.NEVER;
    }
    return {
      settlementId: row.settlement_id,
      settlementDate: row.settlement_date,
      organizationId: row.organization_id,
      paymentId: row.payment_id,
      paymentNumber: row.payment_number,
      installmentId: row.installment_id,
      internalRef: row.internal_ref,
      orderNumber: row.order_number,
      transactionType: row.transaction_type,
      currency: row.currency,
      grossMinor: gross,
      feeMinor: fee,
      netMinor: net,
      bookedAt: new Date(row.booked_at).toISOString(),
    };
  });

/** Where each expected column sits in the file, from its header row. */
export type ColumnIndex = Readonly<Record<SettlementColumn, number>>;

/**
 * Reads the header row: columns are found by name (order free, extra columns ignored,
 * names compared case-insensitively). Returns the problem as text when one is missing.
 */
export function readHeader(fields: readonly string[]): ColumnIndex | string {
  const names = fields.map((field) => field.trim().toLowerCase());
  const index: Partial<Record<SettlementColumn, number>> = {};
  const missing: string[] = [];
  for (const column of SETTLEMENT_CSV_COLUMNS) {
    const at = names.indexOf(column);
    if (at < 0) missing.push(column);
    else index[column] = at;
  }
  if (missing.length > 0) return `header lacks column(s) ${missing.join(', ')}`;
  return index as ColumnIndex;
}

export type RowResult =
  | { readonly ok: true; readonly line: SettlementLine }
  | { readonly ok: false; readonly error: string };

/** Checks one data row against the header's columns and the file's organization. */
export function readRow(
  fields: readonly string[],
  columns: ColumnIndex,
  organizationId: string,
): RowResult {
  const expected = Object.values(columns).reduce((max, at) => Math.max(max, at), 0) + 1;
  if (fields.length < expected) {
    return { ok: false, error: `has ${fields.length} field(s), the header needs ${expected}` };
  }
  const raw: Record<string, string> = {};
  for (const column of SETTLEMENT_CSV_COLUMNS) raw[column] = fields[columns[column]] ?? '';
  const parsed = rowSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const column = String(issue?.path[0] ?? 'row');
    return { ok: false, error: `${column} ${issue?.message ?? 'is invalid'}` };
  }
  if (parsed.data.organizationId !== organizationId) {
    return {
      ok: false,
      error: `organization_id ${parsed.data.organizationId} is not the file's organization`,
    };
  }
  return { ok: true, line: parsed.data };
}
