/**
 * The settlement CSV of the sandbox as rows keyed by column name, and UTC day arithmetic
 * on the sandbox's virtual clock, for the settlement timing, fee and control tests.
 */
import { expect } from '@jest/globals';
import { SETTLEMENT_CSV_COLUMNS } from '../../src/payflow/wire/payflow.partner.schemas.js';
import { fetchToken, type SandboxHandle } from '../support/sandbox.js';
import { call, control } from './helpers.js';

/** The standard CSV's columns, as the client reads them. */
export const COLUMNS = SETTLEMENT_CSV_COLUMNS;

export type Row = Record<(typeof COLUMNS)[number], string>;

/** The rows booked on the UTC dates [from, to], with a fresh token (the clock may have moved). */
export async function settlementRows(
  sandbox: SandboxHandle,
  from: string,
  to: string = from,
): Promise<Row[]> {
  const token = await fetchToken(sandbox);
  const answer = await call(
    'GET',
    `${sandbox.partnerUrl}/settlements/generate_csv?from=${from}&to=${to}`,
    { token },
  );
  expect(answer.status).toBe(200);
  const [header, ...lines] = answer.text.trimEnd().split('\r\n');
  expect(header).toBe(COLUMNS.join(','));
  return lines.map((line) => {
    const cells = line.split(',');
    return Object.fromEntries(COLUMNS.map((column, index) => [column, cells[index] ?? ''])) as Row;
  });
}

/** The sandbox's current UTC date (virtual clock). */
export async function sandboxToday(sandbox: SandboxHandle): Promise<string> {
  return (await control<{ now: string }>(sandbox, 'GET', '/clock')).body.now.slice(0, 10);
}

/** `date` (YYYY-MM-DD) plus `days`. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + days * 86_400_000)
    .toISOString()
    .slice(0, 10);
}

/** gross, fee and net of a row. */
export function amounts(row: Row | undefined): [string, string, string] {
  return [row?.gross_amount ?? '', row?.fee_amount ?? '', row?.net_amount ?? ''];
}
