/**
 * The standard settlement CSV (docs/assumptions.md): RFC 4180, a header row, then one row
 * per money movement booked in the date range, in booking order. settlement_date is the
 * booked date (UTC); fee is 1.5 % of gross rounded half away from zero; refunds negative.
 */
import { formatMinorUnits, roundDecimal } from '../common/money.js';
import { SETTLEMENT_CSV_COLUMNS } from '../payflow/payflow.schemas.js';
import { isoOf, utcDateOf } from './clock.js';
import type { Movement } from './state.js';

/** 1.5 % as an exact decimal: gross × 15 / 1000. */
function feeMinor(grossMinor: number): number {
  return Number(roundDecimal({ digits: BigInt(grossMinor) * 15n, scale: 3 }, 0));
}

export function settlementCsv(
  movements: readonly Movement[],
  organizationId: string,
  from: string,
  to: string,
): string {
  const lines = [SETTLEMENT_CSV_COLUMNS.join(',')];
  for (const movement of movements) {
    if (movement.organizationId !== organizationId) continue;
    const date = utcDateOf(movement.bookedAt);
    if (date < from || date > to) continue;
    const fee = feeMinor(movement.grossMinor);
    const row: Record<(typeof SETTLEMENT_CSV_COLUMNS)[number], string> = {
      settlement_id: movement.id,
      settlement_date: date,
      organization_id: movement.organizationId,
      payment_id: movement.paymentId,
      payment_number: String(movement.paymentNumber),
      installment_id: movement.installmentId ?? '',
      internal_ref: movement.internalRef ?? '',
      order_number: movement.orderNumber,
      transaction_type: movement.type,
      currency: movement.currency,
      gross_amount: formatMinorUnits(movement.grossMinor, movement.currency),
      fee_amount: formatMinorUnits(fee, movement.currency),
      net_amount: formatMinorUnits(movement.grossMinor - fee, movement.currency),
      booked_at: isoOf(movement.bookedAt),
    };
    lines.push(SETTLEMENT_CSV_COLUMNS.map((column) => csvField(row[column])).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
