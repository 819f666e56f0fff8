import { describe, expect, it } from '@jest/globals';
import { SETTLEMENT_CSV_COLUMNS } from '../../payflow/wire/payflow.schemas.js';
import { SettlementCsvReader, type ReaderEvent } from './settlement-csv.reader.js';

const HEADER = SETTLEMENT_CSV_COLUMNS.join(',');

function row(overrides: Partial<Record<(typeof SETTLEMENT_CSV_COLUMNS)[number], string>> = {}) {
  const values: Record<(typeof SETTLEMENT_CSV_COLUMNS)[number], string> = {
    settlement_id: 'st-1',
    settlement_date: '2026-11-21',
    organization_id: 'org-1',
    payment_id: 'pay-1',
    payment_number: '1001',
    installment_id: '',
    internal_ref: 'SO-1',
    order_number: 'ON-1',
    transaction_type: 'payment',
    currency: 'NOK',
    gross_amount: '1249.50',
    fee_amount: '18.74',
    net_amount: '1230.76',
    booked_at: '2026-11-21T10:00:00.000Z',
    ...overrides,
  };
  return SETTLEMENT_CSV_COLUMNS.map((column) => values[column]).join(',');
}

/** Feeds `text` in chunks of `size` bytes (splitting multi-byte characters too). */
async function readAll(text: string, size = 7, organizationId = 'org-1') {
  const reader = new SettlementCsvReader({ organizationId, maxRecordBytes: 1024 });
  const events: ReaderEvent[] = [];
  const consuming = (async () => {
    for await (const event of reader.events()) events.push(event);
  })();
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) await reader.write(bytes.subarray(at, at + size));
  reader.end();
  await consuming;
  return { events, rows: reader.rows, bad: reader.badRowCount };
}

describe('SettlementCsvReader', () => {
  it('reads rows into minor units, whatever the chunking', async () => {
    const text = `\uFEFF${HEADER}\r\n${row()}\r\n${row({ settlement_id: 'st-2', transaction_type: 'refund', gross_amount: '-100.00', fee_amount: '-1.50', net_amount: '-98.50', order_number: 'Ærø "Ø"'.replace(/"/g, '') })}\r\n`;
    for (const size of [1, 3, 7, 64, 100_000]) {
      const { events, rows, bad } = await readAll(text, size);
      expect(bad).toBe(0);
      expect(rows).toBe(2);
      expect(events.map((event) => event.lineNumber)).toEqual([2, 3]);
      const [first, second] = events;
      expect(first).toMatchObject({
        kind: 'line',
        line: {
          grossMinor: 124950,
          feeMinor: 1874,
          netMinor: 123076,
          paymentId: 'pay-1',
          installmentId: null,
        },
      });
      expect(second).toMatchObject({
        kind: 'line',
        line: {
          grossMinor: -10000,
          netMinor: -9850,
          transactionType: 'refund',
          orderNumber: 'Ærø Ø',
        },
      });
    }
  });

  it('finds columns by name and ignores extra ones', async () => {
    const columns = [...SETTLEMENT_CSV_COLUMNS].reverse();
    const values = row().split(',').reverse();
    const text = `${columns.join(',')},extra\n${values.join(',')},x\n`;
    const { events, bad } = await readAll(text);
    expect(bad).toBe(0);
    expect(events[0]).toMatchObject({
      kind: 'line',
      line: { settlementId: 'st-1', grossMinor: 124950 },
    });
  });

  it('reports bad rows at the line where they start and keeps reading', async () => {
    const quoted = row({ order_number: '"multi\r\nline"' });
    const text = [
      HEADER,
      row(),
      '', // a blank line is skipped, but counted
      quoted, // lines 4-5
      row({ gross_amount: '12.345', fee_amount: '0', net_amount: '12.345' }), // line 6
      'not,a,row', // line 7
      row({ net_amount: '1230.75' }), // line 8: does not add up
      row({ organization_id: 'org-2' }), // line 9
      row({ currency: 'XXY' }), // line 10
      row({ settlement_date: '2026-02-30' }), // line 11
      row({ settlement_id: 'st-last' }), // line 12
    ].join('\r\n');
    const { events, rows, bad } = await readAll(text);
    const bads = events.filter((event) => event.kind === 'bad');
    expect(bads.map((event) => event.lineNumber)).toEqual([6, 7, 8, 9, 10, 11]);
    expect(bads.map((event) => (event.kind === 'bad' ? event.error : ''))).toEqual([
      expect.stringContaining('gross_amount'),
      expect.stringContaining('field(s)'),
      'net_amount is not gross_amount minus fee_amount',
      expect.stringContaining("not the file's organization"),
      expect.stringContaining('currency'),
      expect.stringContaining('settlement_date'),
    ]);
    expect(rows).toBe(3);
    expect(bad).toBe(6);
    const lines = events.filter((event) => event.kind === 'line');
    expect(lines.map((event) => event.lineNumber)).toEqual([2, 4, 12]);
    expect(lines[1]).toMatchObject({ line: { orderNumber: 'multi\r\nline' } });
  });

  it('reports an unclosed quote once, for the rest of the file', async () => {
    const text = `${HEADER}\n${row()}\n${row({ order_number: '"never closed' })}\n${row()}\n`;
    const { events, rows, bad } = await readAll(text);
    expect(rows).toBe(1);
    expect(bad).toBe(1);
    expect(events[1]).toEqual({
      kind: 'bad',
      lineNumber: 3,
      error: 'a quoted field is never closed; the rest of the file could not be read',
    });
  });

  it('reports a header that lacks columns, and every row after it', async () => {
    const { events, rows, bad } = await readAll(`settlement_id,gross_amount\n${row()}\n`);
    expect(rows).toBe(0);
    expect(bad).toBe(2);
    expect(events[0]).toMatchObject({
      kind: 'bad',
      lineNumber: 1,
      error: expect.stringContaining('header lacks column(s) settlement_date'),
    });
    expect(events[1]).toMatchObject({ kind: 'bad', lineNumber: 2 });
  });

  it('gives an empty file no rows and no errors', async () => {
    expect(await readAll(`${HEADER}\r\n`)).toEqual({ events: [], rows: 0, bad: 0 });
    expect(await readAll('')).toEqual({ events: [], rows: 0, bad: 0 });
  });
});
