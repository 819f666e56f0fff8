/**
 * The standard settlement CSV (docs/assumptions.md): RFC 4180, a header row, then one row
 * per money movement booked in the date range, ordered by booking time (stable). After
 * each date's rows come that date's raw lines seeded with POST /sandbox/settlements (a
 * broken file), as they are. settlement_date is the booked date (UTC); the fee is the one
 * decided when the line was booked (settlement/fees.ts); refunds negative.
 *
 * The file is streamed in chunks of about 64 KiB, so a large file is never one string.
 */
import { Readable } from 'node:stream';
import { formatMinorUnits } from '../../money/money.js';
import { SETTLEMENT_CSV_COLUMNS } from '../../payflow/wire/payflow.schemas.js';
import { isoOf } from '../state/clock.js';
import type { BookedDate, MovementLedger } from '../state/movement-ledger.js';
import type { Movement } from '../state/state.js';

/** Characters gathered before a chunk is handed on (the rows are ASCII, so about bytes). */
export const SETTLEMENT_CSV_CHUNK_SIZE = 64 * 1024;

const NO_LINES: ReadonlyMap<string, readonly string[]> = new Map();

/**
 * The settlement CSV of one organization for the booked dates [from, to] as a byte stream.
 * The movements and lines are selected when this is called (by date: MovementLedger); the
 * rows are formatted as the stream is read, one chunk at a time, so a large file never
 * holds the event loop for long.
 *
 * @param malformedLines raw lines by booked date (YYYY-MM-DD), written after that date's rows.
 */
export function settlementCsv(
  movements: MovementLedger,
  organizationId: string,
  from: string,
  to: string,
  malformedLines: ReadonlyMap<string, readonly string[]> = NO_LINES,
): Readable {
  const rows = movements.select(organizationId, from, to);
  const extra = [...malformedLines.entries()]
    .filter(([date, lines]) => date >= from && date <= to && lines.length > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([date, lines]) => ({ date, lines: [...lines] }));
  return Readable.from(chunked(csvLines(rows, extra)), { objectMode: false });
}

/** Every line of the file, without its CRLF. */
function* csvLines(
  days: readonly BookedDate[],
  extra: readonly { date: string; lines: readonly string[] }[],
): Generator<string> {
  yield SETTLEMENT_CSV_COLUMNS.join(',');
  let index = 0;
  /** The raw lines of the dates before `date` (all that are left when undefined). */
  function* linesBefore(date: string | undefined): Generator<string> {
    for (
      let entry = extra[index];
      entry !== undefined && (date === undefined || entry.date < date);
      entry = extra[index]
    ) {
      yield* entry.lines;
      index += 1;
    }
  }
  for (const { date, movements } of days) {
    if ((extra[index]?.date ?? date) < date) yield* linesBefore(date);
    for (const movement of movements) yield csvRow(movement, date);
  }
  yield* linesBefore(undefined);
}

/** Joins lines with CRLF (after every line) into chunks of about SETTLEMENT_CSV_CHUNK_SIZE. */
function* chunked(lines: Iterable<string>): Generator<Buffer> {
  let pending: string[] = [];
  let size = 0;
  for (const line of lines) {
    pending.push(line, '\r\n');
    size += line.length + 2;
    if (size >= SETTLEMENT_CSV_CHUNK_SIZE) {
      yield Buffer.from(pending.join(''), 'utf8');
      pending = [];
      size = 0;
    }
  }
  if (pending.length > 0) yield Buffer.from(pending.join(''), 'utf8');
}

function csvRow(movement: Movement, date: string): string {
  const fee = movement.feeMinor;
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
  return SETTLEMENT_CSV_COLUMNS.map((column) => csvField(row[column])).join(',');
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
