/**
 * Pulls one night's settlement file (organization, date, format) and, in one transaction:
 * stores the raw bytes in ~1 MiB chunks with their SHA-256, size and row count, records
 * the rows that do not parse, writes a `settlement.line` per row and a
 * `settlement.file_available` to the outbox, and marks the night pulled.
 *
 * Idempotent: a transaction-scoped advisory lock serializes pulls of the same night
 * across processes (the nightly run, a second replica, an operator's CLI); when the new
 * content hashes like the newest stored version, everything written is rolled back to a
 * savepoint and the pull reports `unchanged`. A different content becomes the next
 * version, names the one it replaces, and is published again in full.
 *
 * Streaming: the body is read chunk by chunk; each chunk is hashed, queued for storage and
 * fed to the CSV reader while rows are written in batches. Nothing holds the whole file.
 *
 * Tracing: each pull is one span (a new trace, CONTRACT §8) whose headers go with the
 * Payflow download and onto every settlement event it writes.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Tracing, type TraceHeaders } from '../../tracing/tracing.js';
import { APP_LOGGER } from '../../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../../logging/logger.js';
import { describeError } from '../../errors/app-error.js';
import { Database, openSavepoint, type Sql } from '../../database/database.js';
import { OutboxCommitted } from '../../outbox/outbox-committed.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';
import { SettlementCsvReader, type ReaderEvent } from '../csv/settlement-csv.reader.js';
import { SettlementLinesRepository } from '../reconcile/settlement-lines.repository.js';
import { SettlementReconciler } from '../reconcile/settlement-reconciler.js';
import { SettlementPullError } from '../settlement.errors.js';
import {
  BAD_ROWS_IN_EVENT,
  settlementFileEvent,
  settlementLineEvent,
  type BadRow,
  type StoredSettlementFile,
} from '../settlement-events.js';
import { SettlementRepository, type SettlementFileRow } from '../settlement.repository.js';
import type {
  PullOutcome,
  PullProgress,
  PullSettlementCommand,
} from './pull-settlement.command.js';

export interface PullResult {
  readonly outcome: PullOutcome;
  /** The file the night now points at (the stored one, or the unchanged latest). */
  readonly file: StoredSettlementFile | null;
  /** Lines whose payment is one of ours (they carry the ERP order id). */
  readonly linkedRows: number;
  readonly durationMs: number;
}

/** Bytes per stored chunk. */
const CHUNK_BYTES = 1024 * 1024;
/** Rows per outbox insert. */
const LINE_BATCH = 500;

interface IngestStats {
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly rows: number;
  readonly badRows: number;
  readonly firstBadRows: readonly BadRow[];
  readonly linkedRows: number;
}

@Injectable()
export class PullSettlementHandler {
  constructor(
    @Inject(Database) private readonly database: Database,
    @Inject(SettlementRepository) private readonly settlements: SettlementRepository,
    @Inject(OutboxWriter) private readonly outbox: OutboxWriter,
    @Inject(OutboxCommitted) private readonly outboxCommitted: OutboxCommitted,
    @Inject(PAYFLOW_API) private readonly payflow: PayflowApi,
    @Optional() @Inject(APP_LOGGER) private readonly logger: AppLogger = silentLogger(),
    @Optional() @Inject(Tracing) private readonly tracing: Tracing = Tracing.off(),
    @Optional()
    @Inject(PaymentRepository)
    private readonly payments: PaymentRepository = new PaymentRepository(),
    @Optional()
    @Inject(SettlementLinesRepository)
    private readonly lines: SettlementLinesRepository = new SettlementLinesRepository(),
    /** Reconciles a night once its new file is stored (absent: the caller reconciles). */
    @Optional()
    @Inject(SettlementReconciler)
    private readonly reconciler?: SettlementReconciler,
  ) {}

  /** Throws SettlementPullError (after recording the failed attempt) when nothing was stored. */
  async execute(
    command: PullSettlementCommand,
    progress?: (progress: PullProgress) => void,
    signal?: AbortSignal,
  ): Promise<PullResult> {
    const started = Date.now();
    const night = {
      organizationId: command.organizationId,
      date: command.date,
      format: command.format,
    };
    const span = this.tracing.start('settlement.pull', undefined, {
      attributes: {
        'organization.id': command.organizationId,
        'settlement.date': command.date,
        'settlement.format': command.format,
        'settlement.trigger': command.trigger,
      },
    });
    const trace = span.headers();
    let result: Omit<PullResult, 'durationMs'>;
    try {
      result = await this.database.transaction(async (tx) => {
        await this.settlements.lockNight(tx, night);
        if (command.onlyIfMissing === true) {
          const current = await this.settlements.night(tx, night);
          if (current?.status === 'pulled') {
            return { outcome: 'skipped' as const, file: null, linkedRows: 0 };
          }
        }
        return this.pullLocked(tx, command, progress, signal, trace);
      });
    } catch (error) {
      const failure = new SettlementPullError(night, error);
      await this.settlements
        .recordFailure(this.database.sql, night, failure.reason.slice(0, 1000), command.trigger)
        .catch((recordError: unknown) => {
          this.logger.error(
            { ...night, err: describeError(recordError) },
            'settlement: the failed attempt could not be recorded',
          );
        });
      span.end(failure);
      throw failure;
    }
    span.setAttributes({ 'settlement.outcome': result.outcome });
    span.end();
    // Each pull that committed events wakes the relay (idle, it would sleep 30 s).
    if (result.outcome === 'stored' || result.outcome === 'changed') {
      await this.reconcileNight(night);
      this.outboxCommitted.committed();
    }
    const durationMs = Date.now() - started;
    if (result.outcome === 'changed') {
      this.logger.warn(
        {
          ...night,
          fileId: result.file?.fileId,
          version: result.file?.version,
          replaces: result.file?.previousFileId,
        },
        'settlement file changed since the last pull: both versions are kept',
      );
    } else if (result.outcome === 'stored') {
      this.logger.info(
        { ...night, fileId: result.file?.fileId, rows: result.file?.rows, durationMs },
        'settlement file stored',
      );
    }
    if ((result.file?.badRows ?? 0) > 0 && result.outcome !== 'unchanged') {
      this.logger.warn(
        {
          ...night,
          fileId: result.file?.fileId,
          badRows: result.file?.badRows,
          first: result.file?.firstBadRows.slice(0, 5),
        },
        'settlement file has rows that do not parse',
      );
    }
    return { ...result, durationMs };
  }

  /**
   * Reconciles the night whose new file was just stored (its lines matched, findings and
   * totals published). A failure is logged: the file stays stored, and the next
   * `settlements reconcile` (or the next nightly run) reconciles it.
   */
  private async reconcileNight(night: { organizationId: string; date: string }): Promise<void> {
    if (this.reconciler === undefined) return;
    try {
      await this.reconciler.reconcile({
        organizationId: night.organizationId,
        from: night.date,
        to: night.date,
      });
    } catch (error) {
      this.logger.error(
        { ...night, err: describeError(error) },
        'settlement night stored but not reconciled; settlements reconcile catches it up',
      );
    }
  }

  private async pullLocked(
    tx: Sql,
    command: PullSettlementCommand,
    progress: ((progress: PullProgress) => void) | undefined,
    signal: AbortSignal | undefined,
    trace: TraceHeaders,
  ): Promise<Omit<PullResult, 'durationMs'>> {
    const latest = await this.settlements.latestFile(tx, command);
    const csv = await this.payflow.generateSettlementCsv(
      { from: command.date, to: command.date, format: command.format },
      { organizationId: command.organizationId, trace, ...(signal ? { signal } : {}) },
    );
    const fileId = randomUUID();
    const beforeFile = await openSavepoint(tx, 'settlement_file');
    const stats = await this.ingest(tx, fileId, command, csv.body, progress, trace);
    if (latest !== null && latest.sha256 === stats.sha256) {
      await beforeFile.rollback();
      await this.settlements.markPulled(tx, command, latest.id, command.trigger);
      const firstBadRows = await this.settlements.errors(tx, latest.id, BAD_ROWS_IN_EVENT);
      return { outcome: 'unchanged', file: storedFile(latest, firstBadRows), linkedRows: 0 };
    }
    const row: Omit<SettlementFileRow, 'pulledAt'> = {
      id: fileId,
      organizationId: command.organizationId,
      dateFrom: command.date,
      dateTo: command.date,
      format: command.format,
      version: (latest?.version ?? 0) + 1,
      previousFileId: latest?.id ?? null,
      sha256: stats.sha256,
      sizeBytes: stats.sizeBytes,
      rowCount: stats.rows,
      badRowCount: stats.badRows,
      contentType: csv.contentType,
      trigger: command.trigger,
    };
    const pulledAt = await this.settlements.insertFile(tx, row);
    const file = storedFile({ ...row, pulledAt }, stats.firstBadRows);
    await this.outbox.append(tx, [settlementFileEvent(file)], undefined, trace);
    await this.settlements.markPulled(tx, command, fileId, command.trigger);
    return { outcome: latest === null ? 'stored' : 'changed', file, linkedRows: stats.linkedRows };
  }

  /** Streams the body into chunks, bad-row records and outbox lines; returns the totals. */
  private async ingest(
    tx: Sql,
    fileId: string,
    command: PullSettlementCommand,
    body: AsyncIterable<Buffer | string>,
    progress: ((progress: PullProgress) => void) | undefined,
    trace: TraceHeaders,
  ): Promise<IngestStats> {
    const reader = new SettlementCsvReader({ organizationId: command.organizationId });
    const file = { fileId, organizationId: command.organizationId };
    const firstBadRows: BadRow[] = [];
    let linkedRows = 0;
    let consumerFailure: Error | undefined;

    const writeLines = async (batch: Extract<ReaderEvent, { kind: 'line' }>[]): Promise<void> => {
      const paymentIds = [
        ...new Set(
          batch.flatMap((event) => (event.line.paymentId === null ? [] : [event.line.paymentId])),
        ),
      ];
      const orders = await this.payments.ordersOfPayflowIds(tx, paymentIds);
      const now = new Date();
      const events = batch.map((event) => {
        const orderId =
          event.line.paymentId === null ? null : (orders.get(event.line.paymentId) ?? null);
        if (orderId !== null) linkedRows += 1;
        return settlementLineEvent(file, event.lineNumber, event.line, orderId);
      });
      await this.outbox.append(tx, events, now, trace);
      await this.lines.insert(tx, fileId, batch);
    };

    const consuming = (async () => {
      let lines: Extract<ReaderEvent, { kind: 'line' }>[] = [];
      let bad: BadRow[] = [];
      for await (const event of reader.events()) {
        if (event.kind === 'line') {
          lines.push(event);
          if (lines.length >= LINE_BATCH) {
            await writeLines(lines);
            lines = [];
          }
        } else {
          const row = { lineNumber: event.lineNumber, error: event.error };
          if (firstBadRows.length < BAD_ROWS_IN_EVENT) firstBadRows.push(row);
          bad.push(row);
          if (bad.length >= LINE_BATCH) {
            await this.settlements.insertErrors(tx, fileId, bad);
            bad = [];
          }
        }
      }
      await writeLines(lines);
      await this.settlements.insertErrors(tx, fileId, bad);
    })().catch((error: unknown) => {
      consumerFailure = error instanceof Error ? error : new Error(String(error));
      reader.abort();
    });

    const hash = createHash('sha256');
    let size = 0;
    let seq = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const storePending = async (): Promise<void> => {
      if (pendingBytes === 0) return;
      const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await this.settlements.insertChunk(tx, fileId, seq, data);
      seq += 1;
    };
    try {
      for await (const piece of body) {
        if (consumerFailure !== undefined) break;
        const chunk = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
        hash.update(chunk);
        size += chunk.length;
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= CHUNK_BYTES) await storePending();
        await reader.write(chunk);
        progress?.({ bytes: size, rows: reader.rows, badRows: reader.badRowCount });
      }
      await storePending();
      reader.end();
    } catch (error) {
      reader.abort();
      await consuming;
      throw error;
    }
    await consuming;
    if (consumerFailure !== undefined) throw consumerFailure;
    progress?.({ bytes: size, rows: reader.rows, badRows: reader.badRowCount });
    return {
      sha256: hash.digest('hex'),
      sizeBytes: size,
      rows: reader.rows,
      badRows: reader.badRowCount,
      firstBadRows,
      linkedRows,
    };
  }
}

/** A stored file as the events and the CLI describe it. */
function storedFile(row: SettlementFileRow, firstBadRows: readonly BadRow[]): StoredSettlementFile {
  return {
    fileId: row.id,
    organizationId: row.organizationId,
    dateFrom: row.dateFrom,
    dateTo: row.dateTo,
    format: row.format,
    version: row.version,
    previousFileId: row.previousFileId,
    sha256: row.sha256,
    sizeBytes: row.sizeBytes,
    rows: row.rowCount,
    badRows: row.badRowCount,
    firstBadRows,
    pulledAt: row.pulledAt,
  };
}
