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
 * one `settlement.file_available` to payflow.settlements.v1 (docs/events.md); then it
 * reconciles the night (docs/finance.md) and publishes to the same topic the night's
 * totals (`settlement.reconciled`) and one `settlement.exception` per finding: here
 * exactly one, the `unknown_payment` of the row of a payment the bridge never created,
 * while the paid demo payments match. The demo reads all of it back like any downstream
 * system, and checks the totals against the sum of the night's lines, in minor units.
 */
import type { z } from 'zod';
import type {
  settlementMovementSchema,
  settlementSeedSchema,
} from '../src/sandbox/control/control.schemas.js';
import type { faultSpecSchema } from '../src/sandbox/faults/faults.js';
import { formatMinorUnits, sumMinor, toMinorUnits } from '../src/money/money.js';
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

/**
 * Rows of other payments (not payflow-bridge's) booked on the night: each is one
 * `unknown_payment` finding of the reconciliation, the night's only finding.
 */
const SYNTHETIC_ROWS = 1;

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
  /**
   * The findings the reconciliation opens (one `unknown_payment` per row of another
   * payment); the paid orders' lines are all matched.
   */
  readonly findings: number;
  /** What the screen says was booked before the worker started. */
  readonly summary: string;
}

/**
 * Yesterday's settlements as of `now`: a row of another payment and one row cut short,
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
    findings: SYNTHETIC_ROWS,
    summary: `${ORGANIZATION_ID} ${date} (yesterday): ${plural(SYNTHETIC_ROWS, 'row')}, 1 cut short`,
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

/** A settlement.reconciled event: one night's totals in one currency. */
export interface SettlementReconciledEvent {
  readonly eventId: string;
  readonly organizationId: string;
  readonly settlementDate: string;
  readonly currency: string;
  readonly grossAmount: string;
  readonly feeAmount: string;
  readonly netAmount: string;
  readonly lines: number;
  readonly linesMatched: number;
  readonly findings: number;
}

/** A settlement.exception event: one finding of the reconciliation. */
export interface SettlementExceptionEvent {
  readonly eventId: string;
  readonly organizationId: string;
  /** The ERP order of the payment, or null when the bridge does not know the payment. */
  readonly orderId: string | null;
  readonly paymentId: string;
  readonly findingId: string;
  readonly kind: string;
  readonly subject: string;
  readonly installmentId: string | null;
  readonly currency: string;
  /** Null when nothing is known to be due (an unknown payment). */
  readonly expectedAmount: string | null;
  readonly settledAmount: string;
}

export interface Settlements {
  readonly files: readonly SettlementFileEvent[];
  readonly lines: readonly SettlementLineEvent[];
  /** In the order they came (a night's totals are published again when they change). */
  readonly reconciled: readonly SettlementReconciledEvent[];
  readonly exceptions: readonly SettlementExceptionEvent[];
}

/** The events of payflow.settlements.v1 among `messages`, each once (on eventId). */
export function settlementsOf(messages: readonly ReceivedMessage[]): Settlements {
  const seen = new Set<string>();
  const files: SettlementFileEvent[] = [];
  const lines: SettlementLineEvent[] = [];
  const reconciled: SettlementReconciledEvent[] = [];
  const exceptions: SettlementExceptionEvent[] = [];
  for (const message of messages) {
    if (message.topic !== TOPICS.settlements) continue;
    const event = parseSettlementEvent(message.value);
    if (event === null || seen.has(event.eventId)) continue;
    seen.add(event.eventId);
    if (event.kind === 'file') files.push(event.file);
    else if (event.kind === 'line') lines.push(event.line);
    else if (event.kind === 'reconciled') reconciled.push(event.reconciled);
    else exceptions.push(event.exception);
  }
  return { files, lines, reconciled, exceptions };
}

/** What came back for the demo's night. */
export interface NightResult {
  /** Its newest file. */
  readonly file: SettlementFileEvent | null;
  /** That file's lines, in line order. */
  readonly lines: readonly SettlementLineEvent[];
  /** The night's latest totals, one per currency (sorted by currency). */
  readonly reconciled: readonly SettlementReconciledEvent[];
  /**
   * The findings of the night's organization, in the order they came. The demo's Kafka
   * is new every run, so they are all this night's.
   */
  readonly exceptions: readonly SettlementExceptionEvent[];
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
  const latest = new Map<string, SettlementReconciledEvent>();
  for (const totals of settlements.reconciled) {
    if (totals.organizationId !== night.organizationId) continue;
    if (totals.settlementDate === night.date) latest.set(totals.currency, totals);
  }
  const reconciled = [...latest.values()].sort((a, b) => a.currency.localeCompare(b.currency));
  const exceptions = settlements.exceptions.filter(
    (exception) => exception.organizationId === night.organizationId,
  );
  if (file === null) return { file: null, lines: [], reconciled, exceptions };
  const lines = settlements.lines
    .filter((line) => line.fileId === file.fileId)
    .sort((a, b) => a.lineNumber - b.lineNumber);
  return { file, lines, reconciled, exceptions };
}

/** What is still missing of the night, as lines like those of missingOutcomes. */
export function missingSettlements(night: DemoNight, result: NightResult): string[] {
  const name = `${night.organizationId} ${night.date}`;
  if (result.file === null) return [`settlements ${name}: settlement.file_available`];
  const missing: string[] = [];
  const lineNumbers = new Set(result.lines.map((line) => line.lineNumber));
  if (lineNumbers.size < result.file.rows) {
    missing.push(
      `settlements ${name}: settlement.line (${lineNumbers.size} of ${result.file.rows} arrived)`,
    );
  }
  // The reconciliation runs once the night is stored: totals for each currency of its
  // lines (none: one reconciled event, with zero lines, is still expected), then findings.
  const currencies = new Set(result.lines.map((line) => line.currency));
  const totalled = new Set(result.reconciled.map((totals) => totals.currency));
  const untotalled = [...currencies].filter((currency) => !totalled.has(currency)).sort();
  if (result.reconciled.length === 0 || untotalled.length > 0) {
    const which = untotalled.length === 0 ? '' : ` (${untotalled.join(', ')})`;
    missing.push(`settlements ${name}: settlement.reconciled${which}`);
  }
  const expected = Math.max(
    night.findings,
    result.reconciled.reduce((n, totals) => n + totals.findings, 0),
  );
  if (result.exceptions.length < expected) {
    missing.push(
      `settlements ${name}: settlement.exception (${result.exceptions.length} of ${expected} arrived)`,
    );
  }
  return missing;
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
  const lineNumbers = new Set(result.lines.map((line) => line.lineNumber));
  if (lineNumbers.size < file.rows) return [];
  const named = new Set(result.lines.map((line) => line.orderId));
  const unnamed = night.paidOrders
    .filter((orderId) => !named.has(orderId))
    .map(
      (orderId) =>
        `no settlement.line of ${night.organizationId} ${night.date} names order ${orderId}, ` +
        'whose payment is booked on that night',
    );
  return [...unnamed, ...reconciliationProblems(night, result)];
}

/**
 * What is wrong with the night's reconciliation, once all its lines came: totals that are
 * not the exact sum of the lines of their currency (in minor units), another number of
 * lines, matched lines or findings than the demo booked, or a finding other than the
 * `unknown_payment` of a line that is not one of the bridge's payments.
 */
function reconciliationProblems(night: DemoNight, result: NightResult): string[] {
  const name = `${night.organizationId} ${night.date}`;
  const problems: string[] = [];
  for (const totals of result.reconciled) {
    const lines = result.lines.filter((line) => line.currency === totals.currency);
    const what = `settlement.reconciled ${name} ${totals.currency}`;
    if (totals.lines !== lines.length) {
      problems.push(`${what} counts ${totals.lines} lines; ${lines.length} came`);
    }
    const sums = lineSums(lines, totals.currency);
    if (sums === null) {
      problems.push(`${what}: a settlement.line of ${totals.currency} has no amount`);
      continue;
    }
    for (const field of ['grossAmount', 'feeAmount', 'netAmount'] as const) {
      const stated = minorOf(totals[field], totals.currency);
      if (stated === sums[field]) continue;
      problems.push(
        `${what} has ${field} ${totals[field]}; the sum of its ${plural(lines.length, 'line')} ` +
          `is ${formatMinorUnits(sums[field], totals.currency)}`,
      );
    }
  }
  if (result.exceptions.length > night.findings) {
    problems.push(
      `${plural(result.exceptions.length, 'settlement.exception')} of ${night.organizationId} ` +
        `came; the demo expects ${night.findings}`,
    );
  }
  const notOurs = new Set(
    result.lines.filter((line) => line.orderId === null).map((line) => line.paymentId),
  );
  for (const exception of result.exceptions) {
    if (exception.kind === 'unknown_payment' && notOurs.has(exception.paymentId)) continue;
    problems.push(
      `settlement.exception ${exception.kind} of payment ${exception.paymentId}` +
        `${exception.orderId === null ? '' : ` (order ${exception.orderId})`}: the demo ` +
        'expects only unknown_payment of the rows not ours',
    );
  }
  if (result.reconciled.length === 0) return problems;
  const findings = result.reconciled.reduce((n, totals) => n + totals.findings, 0);
  if (findings !== night.findings) {
    problems.push(
      `settlement.reconciled ${name} has ${plural(findings, 'finding')}; the demo booked ` +
        `${night.findings} row${night.findings === 1 ? '' : 's'} of payments not the bridge's ` +
        `(${plural(night.findings, 'unknown_payment')}) and nothing else to find`,
    );
  }
  const matched = result.reconciled.reduce((n, totals) => n + totals.linesMatched, 0);
  if (matched !== night.paidOrders.length) {
    problems.push(
      `settlement.reconciled ${name} matched ${plural(matched, 'line')}; the paid orders' ` +
        `${plural(night.paidOrders.length, 'line')} should all match`,
    );
  }
  return problems;
}

/** The exact sums of `lines` in minor units of `currency`; null when an amount is not one. */
export function lineSums(
  lines: readonly SettlementLineEvent[],
  currency: string,
): { grossAmount: number; feeAmount: number; netAmount: number } | null {
  const amounts = (field: 'grossAmount' | 'feeAmount' | 'netAmount'): number | null => {
    const minor = lines.map((line) => minorOf(line[field], currency));
    return minor.every((value): value is number => value !== null) ? sumMinor(minor) : null;
  };
  const grossAmount = amounts('grossAmount');
  const feeAmount = amounts('feeAmount');
  const netAmount = amounts('netAmount');
  if (grossAmount === null || feeAmount === null || netAmount === null) return null;
  return { grossAmount, feeAmount, netAmount };
}

/** Decimal text in major units ("1249.50") as exact minor units, or null when it is not. */
function minorOf(amount: string, currency: string): number | null {
  try {
    return toMinorUnits(amount, currency);
  } catch {
    return null;
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

type ParsedEvent =
  | { readonly kind: 'file'; readonly eventId: string; readonly file: SettlementFileEvent }
  | { readonly kind: 'line'; readonly eventId: string; readonly line: SettlementLineEvent }
  | {
      readonly kind: 'reconciled';
      readonly eventId: string;
      readonly reconciled: SettlementReconciledEvent;
    }
  | {
      readonly kind: 'exception';
      readonly eventId: string;
      readonly exception: SettlementExceptionEvent;
    };

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
  if (type === 'settlement.reconciled') {
    return {
      kind: 'reconciled',
      eventId,
      reconciled: {
        eventId,
        organizationId,
        settlementDate: str(data['settlementDate']),
        currency: str(data['currency']),
        grossAmount: str(data['grossAmount']),
        feeAmount: str(data['feeAmount']),
        netAmount: str(data['netAmount']),
        lines: num(data['lines']),
        linesMatched: num(data['linesMatched']),
        findings: num(data['findings']),
      },
    };
  }
  if (type === 'settlement.exception') {
    const expected = data['expectedAmount'];
    const installmentId = data['installmentId'];
    return {
      kind: 'exception',
      eventId,
      exception: {
        eventId,
        organizationId,
        orderId: typeof orderId === 'string' ? orderId : null,
        paymentId: str(paymentId),
        findingId: str(data['findingId']),
        kind: str(data['kind']),
        subject: str(data['subject']),
        installmentId: typeof installmentId === 'string' ? installmentId : null,
        currency: str(data['currency']),
        expectedAmount: typeof expected === 'string' ? expected : null,
        settledAmount: str(data['settledAmount']),
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
