/**
 * Events of the settlements topic (TOPIC_SETTLEMENTS; schemas in src/events), written to
 * the outbox in the transaction that stores the file. JSON envelope, like the payment status topic:
 * `{ eventId, type, occurredAt, organizationId, orderId, paymentId, data }`, with
 * `content-type` and `x-event-type` headers. Money is decimal text in major units beside
 * `currency`.
 *
 * - `settlement.line`: one per parsed row, keyed by Payflow's payment id (a row without
 *   one is keyed by the file id); `orderId` is the ERP order when the payment is one
 *   payflow-bridge created, else null. `data.fileId` joins it to its file.
 * - `settlement.file_available`: one per stored file content, keyed by the organization
 *   id, written to the outbox after the file's lines. Lines and file travel on different
 *   keys, hence partitions, so a consumer may see the file event first: it knows the file
 *   is complete when it holds `rows` lines of that `fileId`.
 */
import { formatMinorUnits } from '../money/money.js';
import type { OutboundEventType, TypedOutboundEvent } from '../events/outbound-events.js';
import type { SettlementLine } from './csv/settlement-row.js';

export const SETTLEMENT_EVENT_TYPES = [
  'settlement.file_available',
  'settlement.line',
  'settlement.exception',
  'settlement.reconciled',
] as const satisfies readonly OutboundEventType[];
export type SettlementEventType = (typeof SETTLEMENT_EVENT_TYPES)[number];

/** A bad row as the file event reports it. */
export interface BadRow {
  readonly lineNumber: number;
  readonly error: string;
}

/** Most bad rows listed in a file event (all are in settlement_file_errors). */
export const BAD_ROWS_IN_EVENT = 20;

/** One version of a settlement file's content, as its row and its events both describe it. */
export interface SettlementFileVersion {
  readonly organizationId: string;
  readonly dateFrom: string;
  readonly dateTo: string;
  readonly format: string;
  readonly version: number;
  /** The file this content replaces (an earlier version), or null for the first. */
  readonly previousFileId: string | null;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly pulledAt: Date;
}

export interface StoredSettlementFile extends SettlementFileVersion {
  readonly fileId: string;
  readonly rows: number;
  readonly badRows: number;
  readonly firstBadRows: readonly BadRow[];
}

/**
 * A settlement event before its id and time (OutboxWriter gives them, and checks it): its
 * type and its data, typed from its schema, as one pair.
 */
export type SettlementEvent<T extends SettlementEventType = SettlementEventType> = {
  readonly [K in T]: TypedOutboundEvent<K> & { readonly organizationId: string };
}[T];

/** `settlement.line` of one parsed row. */
export function settlementLineEvent(
  file: { readonly fileId: string; readonly organizationId: string },
  lineNumber: number,
  line: SettlementLine,
  orderId: string | null,
): SettlementEvent<'settlement.line'> {
  const money = (minor: number): string => formatMinorUnits(minor, line.currency);
  return {
    type: 'settlement.line',
    organizationId: file.organizationId,
    orderId,
    paymentId: line.paymentId,
    data: {
      fileId: file.fileId,
      lineNumber,
      settlementId: line.settlementId,
      settlementDate: line.settlementDate,
      paymentNumber: line.paymentNumber,
      installmentId: line.installmentId,
      internalRef: line.internalRef,
      orderNumber: line.orderNumber,
      transactionType: line.transactionType,
      currency: line.currency,
      grossAmount: money(line.grossMinor),
      feeAmount: money(line.feeMinor),
      netAmount: money(line.netMinor),
      bookedAt: line.bookedAt,
    },
  };
}

/** `settlement.file_available` of a stored file. */
export function settlementFileEvent(
  file: StoredSettlementFile,
): SettlementEvent<'settlement.file_available'> {
  return {
    type: 'settlement.file_available',
    organizationId: file.organizationId,
    orderId: null,
    paymentId: null,
    data: {
      fileId: file.fileId,
      dateFrom: file.dateFrom,
      dateTo: file.dateTo,
      format: file.format,
      version: file.version,
      replacesFileId: file.previousFileId,
      rows: file.rows,
      badRows: file.badRows,
      badRowSamples: file.firstBadRows.slice(0, BAD_ROWS_IN_EVENT),
      sizeBytes: file.sizeBytes,
      sha256: file.sha256,
      pulledAt: file.pulledAt.toISOString(),
    },
  };
}
