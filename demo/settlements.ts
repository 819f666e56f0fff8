/**
 * The nightly settlements part of the demo. Before the worker starts, the demo books
 * yesterday's settlement CSV (UTC) for its organization in the sandbox: a few rows of
 * payments that are not the demo's and a line cut short; and it holds the night's file
 * back (the sandbox answers 503 to GET /settlements/generate_csv, as Payflow would while
 * the night is not complete). Once the payer has paid the demo's payments (payer.ts), the
 * demo books those movements on the same night with their real Payflow ids and lets the
 * file go. The worker runs its nightly cron every 2 s: its ticks until then fail and leave
 * the night missing; the next one pulls it, stores the file and publishes one
 * `settlement.line` per row (naming the order of each payment payflow-bridge created) and
 * one `settlement.file_available` to payflow.settlements.v1 (docs/events.md), which the
 * demo reads back like any downstream system.
 */
import type { z } from 'zod';
import type {
  settlementMovementSchema,
  settlementSeedSchema,
} from '../src/sandbox/control/control.schemas.js';
import type { faultSpecSchema } from '../src/sandbox/faults/faults.js';
import { TOPICS, type ReceivedMessage } from './kafka.js';
import { sandboxJson, type Paid } from './payer.js';
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
type MovementBody = z.input<typeof settlementMovementSchema>;
type FaultBody = z.input<typeof faultSpecSchema>;

/** Rows of other payments (not payflow-bridge's) booked on the night. */
const SYNTHETIC_ROWS = 2;

/** The night the demo books in the sandbox, and what the worker should make of it. */
export interface DemoNight {
  readonly organizationId: string;
  /** Yesterday (UTC): the night the cron's first tick pulls. */
  readonly date: string;
  /** What is booked before the worker starts: rows of other payments, a row cut short. */
  readonly seed: SettlementSeedBody;
  /** The demo's orders whose payments the payer pays and the night then books, in order. */
  readonly paidOrders: readonly string[];
  /** Rows that parse (settlement.line events) and rows that do not. */
  readonly rows: number;
  readonly badRows: number;
  /** What the screen says was booked before the worker started. */
  readonly summary: string;
}

/**
 * Yesterday's settlements as of `now`: three rows of other payments and one row cut short,
 * then (bookPaid) one row for each of `paidOrders`.
 */
export function demoNight(now: Date, paidOrders: readonly string[]): DemoNight {
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
    seed: {
      organizationId: ORGANIZATION_ID,
      date,
      count: SYNTHETIC_ROWS,
      malformedLines: [truncated],
    },
    paidOrders,
    rows: SYNTHETIC_ROWS + paidOrders.length,
    badRows: 1,
    summary: `${ORGANIZATION_ID} ${date} (yesterday): ${SYNTHETIC_ROWS} rows, 1 cut short`,
  };
}

/** Books `night`'s seed in the sandbox (POST /sandbox/settlements); throws otherwise. */
export async function seedNight(sandboxUrl: string, night: DemoNight): Promise<void> {
  await sandboxJson(`${sandboxUrl}/sandbox/settlements`, night.seed);
}

/**
 * Books what the payer paid on `night` (POST /sandbox/settlements): one movement per
 * payment, with Payflow's payment (and installment) id, so the sandbox fills in its payment
 * number, order number and internal ref. The sandbox books a payment it sees paid on the
 * day it is paid (today: tonight's file); the demo books the same money on last night,
 * the night the worker pulls now.
 */
export async function bookPaid(
  sandboxUrl: string,
  night: DemoNight,
  paid: readonly Paid[],
): Promise<void> {
  const movements: MovementBody[] = paid.map((payment) => ({
    paymentId: payment.paymentId,
    ...(payment.installmentId === null ? {} : { installmentId: payment.installmentId }),
    type: 'payment',
    currency: payment.currency,
    grossAmount: payment.amount,
    // After the other rows (00:00 and 12:00), in the order paid.
    bookedAt: `${night.date}T18:00:00.000Z`,
  }));
  const seed: SettlementSeedBody = {
    organizationId: night.organizationId,
    date: night.date,
    movements,
  };
  await sandboxJson(`${sandboxUrl}/sandbox/settlements`, seed);
}

/** The fault that holds every settlement file back (the Payflow path, /partner prefix). */
const HOLD_FILES: FaultBody = {
  method: 'GET',
  path: '/partner/settlements/generate_csv',
  status: 503,
};

/** Holds the settlement files back (503) until releaseFiles; returns the fault's id. */
export async function holdFiles(sandboxUrl: string): Promise<string> {
  const answer = await sandboxJson(`${sandboxUrl}/sandbox/faults`, HOLD_FILES);
  const id = isRecord(answer) ? answer['id'] : undefined;
  if (typeof id !== 'string') throw new Error('POST /sandbox/faults answered without an id');
  return id;
}

/** Lets the settlement files go (DELETE /sandbox/faults/{id}). */
export async function releaseFiles(sandboxUrl: string, holdId: string): Promise<void> {
  await sandboxJson(
    `${sandboxUrl}/sandbox/faults/${encodeURIComponent(holdId)}`,
    undefined,
    'DELETE',
  );
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

/**
 * What is wrong with the night's file, once it is there: rows counted otherwise than
 * booked, or (once all its lines came) no line naming one of the paid orders.
 */
export function settlementProblems(night: DemoNight, result: NightResult): string[] {
  const file = result.file;
  if (file === null) return [];
  if (file.rows !== night.rows || file.badRows !== night.badRows) {
    return [
      `settlement file ${night.organizationId} ${night.date} has ${file.rows} rows and ` +
        `${file.badRows} bad rows; the sandbox holds ${night.rows} and ${night.badRows}`,
    ];
  }
  if (missingSettlements(night, result).length > 0) return [];
  const named = new Set(result.lines.map((line) => line.orderId));
  return night.paidOrders
    .filter((orderId) => !named.has(orderId))
    .map(
      (orderId) =>
        `no settlement.line of ${night.organizationId} ${night.date} names order ${orderId}, ` +
        'whose payment is booked on that night',
    );
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
