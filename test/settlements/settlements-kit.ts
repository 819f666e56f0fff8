/**
 * Helpers of the settlement tests: seeding the sandbox's settlement rows, reading the
 * CSV as Payflow serves it, and reading the settlement tables.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { fetchToken, sandboxControl, type SandboxHandle } from '../support/sandbox.js';

export { sandboxControl };

export interface MovementSeed {
  paymentId?: string;
  grossAmount: string;
  type?: 'payment' | 'refund';
}

export interface SettlementSeed {
  organizationId?: string;
  date: string;
  count?: number;
  movements?: MovementSeed[];
  malformedLines?: string[];
}

export function seedSettlements(sandbox: SandboxHandle, seed: SettlementSeed): Promise<unknown> {
  return sandboxControl(sandbox, 'POST', '/settlements', seed);
}

/** The CSV of one night exactly as Payflow (the sandbox) serves it. */
export async function payflowCsv(
  sandbox: SandboxHandle,
  date: string,
  organizationId = 'org-1',
): Promise<Buffer> {
  const token = await fetchToken(sandbox);
  const response = await fetch(
    `${sandbox.partnerUrl}/settlements/generate_csv?from=${date}&to=${date}&format=standard`,
    { headers: { authorization: `Bearer ${token}`, 'x-organization-id': organizationId } },
  );
  if (response.status !== 200) throw new Error(`generate_csv: ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** An instant on `date` (UTC) at 02:30, when the nightly run fires. */
export const runTimeOn = (date: string): Date => new Date(`${date}T02:30:00Z`);

export interface FileRow {
  id: string;
  organization_id: string;
  date_from: string;
  version: number;
  previous_file_id: string | null;
  sha256: string;
  size_bytes: string;
  row_count: number;
  bad_row_count: number;
  trigger: string;
}

export async function filesOf(db: pg.Pool, date: string): Promise<FileRow[]> {
  const { rows } = await db.query<FileRow>(
    `SELECT id::text, organization_id, to_char(date_from, 'YYYY-MM-DD') AS date_from, version,
            previous_file_id::text, sha256, size_bytes, row_count, bad_row_count, trigger
       FROM settlement_files WHERE date_from = $1::date ORDER BY version`,
    [date],
  );
  return rows;
}

export async function storedBytes(db: pg.Pool, fileId: string): Promise<Buffer> {
  const { rows } = await db.query<{ data: Buffer }>(
    'SELECT data FROM settlement_file_chunks WHERE file_id = $1 ORDER BY seq',
    [fileId],
  );
  return Buffer.concat(rows.map((row) => row.data));
}

export interface NightRow {
  date: string;
  status: string;
  attempts: number;
  last_error: string | null;
  file_id: string | null;
}

export async function nightsOf(db: pg.Pool, organizationId = 'org-1'): Promise<NightRow[]> {
  const { rows } = await db.query<NightRow>(
    `SELECT to_char(settlement_date, 'YYYY-MM-DD') AS date, status, attempts, last_error,
            file_id::text FROM settlement_nights WHERE organization_id = $1 ORDER BY settlement_date`,
    [organizationId],
  );
  return rows;
}

export async function outboxCount(db: pg.Pool, topic: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM outbox WHERE topic = $1',
    [topic],
  );
  return Number(rows[0]?.n ?? 0);
}

/** A settlements-topic event as consumers see it. */
export interface SettlementEvent {
  eventId: string;
  type: 'settlement.file_available' | 'settlement.line';
  organizationId: string;
  orderId: string | null;
  paymentId: string | null;
  data: Record<string, unknown> & { fileId: string };
}
