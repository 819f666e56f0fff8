/**
 * The nightly settlements part of the demo. Before the worker starts, the demo books
 * yesterday's settlement CSV (UTC) for its organization in the sandbox: a few rows and a
 * line cut short. The worker runs its nightly cron every 2 s; the first tick pulls
 * yesterday, stores the file and publishes one `settlement.line` per row and one
 * `settlement.file_available` to payflow.settlements.v1 (docs/events.md), which the demo
 * reads back like any downstream system.
 */
import type { z } from 'zod';
import type { settlementSeedSchema } from '../src/sandbox/control.schemas.js';
import { TOPICS, type ReceivedMessage } from './kafka.js';
import { ORGANIZATION_ID, addDays } from './scenario.js';

/** The worker's SETTLEMENT_CRON and SETTLEMENT_TIMEZONE in the demo. */
export const DEMO_SCHEDULE = {
  cron: '*/2 * * * * *',
  timeZone: 'UTC',
  /** What the cron means, for the screen. */
  says: 'every 2 s',
} as const;

/** When SETTLEMENT_CRON and SETTLEMENT_TIMEZONE are unset (0 30 2 * * *, Europe/Oslo). */
export const DEFAULT_SCHEDULE = '02:30 Europe/Oslo';

/** The body of POST /sandbox/settlements. */
export type SettlementSeedBody = z.input<typeof settlementSeedSchema>;

/** The night the demo books in the sandbox, and what the worker should make of it. */
export interface DemoNight {
  readonly organizationId: string;
  /** Yesterday (UTC): the night the cron's first tick pulls. */
  readonly date: string;
  readonly seed: SettlementSeedBody;
  /** Rows that parse (settlement.line events) and rows that do not. */
  readonly rows: number;
  readonly badRows: number;
  /** What the screen says was booked. */
  readonly summary: string;
}

/** Yesterday's settlements as of `now`: three synthetic rows and one row cut short. */
export function demoNight(now: Date = new Date()): DemoNight {
  const date = addDays(now, -1);
  // A row cut off after gross_amount, as a broken export would write it: 11 of 14 fields.
  const truncated = [
    '6a0f3c2e9b1d4a7c8e5f2a10',
    date,
    ORGANIZATION_ID,
    '6a0f3c2e9b1d4a7c8e5f2a11',
    '1099',
    '',
    '',
    'SB-1099',
    'payment',
    'NOK',
    '1249.50',
  ].join(',');
  return {
    organizationId: ORGANIZATION_ID,
    date,
    seed: { organizationId: ORGANIZATION_ID, date, count: 3, malformedLines: [truncated] },
    rows: 3,
    badRows: 1,
    summary: `${ORGANIZATION_ID} ${date} (yesterday): 3 rows booked, and 1 row cut short`,
  };
}

/** Books `night` in the sandbox (POST /sandbox/settlements); throws with the answer otherwise. */
export async function seedNight(sandboxUrl: string, night: DemoNight): Promise<void> {
  const response = await fetch(`${sandboxUrl}/sandbox/settlements`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(night.seed),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await response.text();
  if (response.status !== 201) {
    throw new Error(
      `POST /sandbox/settlements answered ${response.status}: ${body.slice(0, 300) || '(empty)'}`,
    );
  }
}

export interface BadRowSample {
  readonly lineNumber: number;
  readonly error: string;
}

/** A settlement.file_available event, the fields the demo shows. */
export interface SettlementFileEvent {
  readonly eventId: string;
  readonly organizationId: string;
  readonly fileId: string;
  readonly dateFrom: string;
  readonly dateTo: string;
  readonly format: string;
  readonly version: number;
  readonly rows: number;
  readonly badRows: number;
  readonly badRowSamples: readonly BadRowSample[];
  readonly sizeBytes: number;
  readonly sha256: string;
}

/** A settlement.line event, the fields the demo shows. */
export interface SettlementLineEvent {
  readonly eventId: string;
  readonly organizationId: string;
  /** The ERP order when the payment is one payflow-bridge created, else null. */
  readonly orderId: string | null;
  readonly paymentId: string | null;
  readonly fileId: string;
  readonly lineNumber: number;
  readonly settlementId: string;
  readonly transactionType: string;
  readonly currency: string;
  readonly grossAmount: string;
  readonly feeAmount: string;
  readonly netAmount: string;
}

export interface Settlements {
  readonly files: readonly SettlementFileEvent[];
  readonly lines: readonly SettlementLineEvent[];
}

/** The events of payflow.settlements.v1 among `messages`, each once (on eventId). */
export function settlementsOf(messages: readonly ReceivedMessage[]): Settlements {
  const seen = new Set<string>();
  const files: SettlementFileEvent[] = [];
  const lines: SettlementLineEvent[] = [];
  for (const message of messages) {
    if (message.topic !== TOPICS.settlements) continue;
    const event = parseSettlementEvent(message.value);
    if (event === null || seen.has(event.eventId)) continue;
    seen.add(event.eventId);
    if (event.kind === 'file') files.push(event.file);
    else lines.push(event.line);
  }
  return { files, lines };
}

/** What came back for the demo's night: its newest file, and that file's lines. */
export interface NightResult {
  readonly file: SettlementFileEvent | null;
  /** In line order. */
  readonly lines: readonly SettlementLineEvent[];
}

export function nightResult(settlements: Settlements, night: DemoNight): NightResult {
  const file =
    settlements.files
      .filter(
        (f) =>
          f.organizationId === night.organizationId &&
          f.dateFrom === night.date &&
          f.dateTo === night.date,
      )
      .sort((a, b) => b.version - a.version)[0] ?? null;
  if (file === null) return { file: null, lines: [] };
  const lines = settlements.lines
    .filter((line) => line.fileId === file.fileId)
    .sort((a, b) => a.lineNumber - b.lineNumber);
  return { file, lines };
}

/** What is still missing of the night, as lines like those of missingOutcomes. */
export function missingSettlements(night: DemoNight, result: NightResult): string[] {
  const name = `${night.organizationId} ${night.date}`;
  if (result.file === null) return [`settlements ${name}: settlement.file_available`];
  const lineNumbers = new Set(result.lines.map((line) => line.lineNumber));
  if (lineNumbers.size >= result.file.rows) return [];
  return [
    `settlements ${name}: settlement.line (${lineNumbers.size} of ${result.file.rows} arrived)`,
  ];
}

/** What is wrong with the night's file, once it is there (rows counted otherwise than seeded). */
export function settlementProblems(night: DemoNight, result: NightResult): string[] {
  const file = result.file;
  if (file === null || (file.rows === night.rows && file.badRows === night.badRows)) return [];
  return [
    `settlement file ${night.organizationId} ${night.date} has ${file.rows} rows and ` +
      `${file.badRows} bad rows; the sandbox holds ${night.rows} and ${night.badRows}`,
  ];
}

type ParsedEvent =
  | { readonly kind: 'file'; readonly eventId: string; readonly file: SettlementFileEvent }
  | { readonly kind: 'line'; readonly eventId: string; readonly line: SettlementLineEvent };

function parseSettlementEvent(value: string): ParsedEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  if (!isRecord(parsed) || !isRecord(parsed['data'])) return null;
  const { eventId, type, organizationId, orderId, paymentId } = parsed;
  const data = parsed['data'];
  if (typeof eventId !== 'string' || typeof organizationId !== 'string') return null;
  if (type === 'settlement.file_available') {
    const samples = Array.isArray(data['badRowSamples'])
      ? (data['badRowSamples'] as unknown[])
      : [];
    return {
      kind: 'file',
      eventId,
      file: {
        eventId,
        organizationId,
        fileId: str(data['fileId']),
        dateFrom: str(data['dateFrom']),
        dateTo: str(data['dateTo']),
        format: str(data['format']),
        version: num(data['version']),
        rows: num(data['rows']),
        badRows: num(data['badRows']),
        badRowSamples: samples.filter(isRecord).map((sample) => ({
          lineNumber: num(sample['lineNumber']),
          error: str(sample['error']),
        })),
        sizeBytes: num(data['sizeBytes']),
        sha256: str(data['sha256']),
      },
    };
  }
  if (type === 'settlement.line') {
    return {
      kind: 'line',
      eventId,
      line: {
        eventId,
        organizationId,
        orderId: typeof orderId === 'string' ? orderId : null,
        paymentId: typeof paymentId === 'string' ? paymentId : null,
        fileId: str(data['fileId']),
        lineNumber: num(data['lineNumber']),
        settlementId: str(data['settlementId']),
        transactionType: str(data['transactionType']),
        currency: str(data['currency']),
        grossAmount: str(data['grossAmount']),
        feeAmount: str(data['feeAmount']),
        netAmount: str(data['netAmount']),
      },
    };
  }
  return null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '?';
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
