/**
 * The only owner of `settlement_lines`' SQL: the good lines of every stored file version,
 * written in batches with the file, and what the last reconciliation made of each.
 * "Current" lines are those of the file a night points at (settlement_nights.file_id): the
 * newest version of each night, so a newer version replaces the lines of the older one.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';
import { minorUnitsField } from '../../database/row-schemas.js';
import type { SettlementLine } from '../csv/settlement-row.js';
import { FINDING_KINDS, LINE_MATCHES, type LineResult } from './settlement-match.js';

const CURRENT = `settlement_lines l JOIN settlement_nights n ON n.file_id = l.file_id`;

const lineRow = z.object({
  fileId: z.string(),
  lineNumber: z.number().int(),
  organizationId: z.string(),
  settlementDate: z.string(),
  payflowPaymentId: z.string(),
  installmentId: z.string().nullable(),
  transactionType: z.string(),
  currency: z.string(),
  grossMinor: minorUnitsField,
});
export type CurrentLine = z.infer<typeof lineRow>;

const totalsRow = z.object({
  organizationId: z.string(),
  settlementDate: z.string(),
  currency: z.string(),
  grossMinor: minorUnitsField,
  feeMinor: minorUnitsField,
  netMinor: minorUnitsField,
  lines: z.number().int(),
  linesMatched: z.number().int(),
  findings: z.number().int(),
});
export type LineTotals = z.infer<typeof totalsRow>;

const csvRow = z.object({
  fileId: z.string(),
  lineNumber: z.number().int(),
  organizationId: z.string(),
  settlementDate: z.string(),
  payflowPaymentId: z.string().nullable(),
  installmentId: z.string().nullable(),
  transactionType: z.string(),
  currency: z.string(),
  grossMinor: minorUnitsField,
  feeMinor: minorUnitsField,
  netMinor: minorUnitsField,
  bookedAt: z.string(),
  internalRef: z.string().nullable(),
  orderNumber: z.string().nullable(),
  match: z.enum(LINE_MATCHES).nullable(),
  findingKind: z.enum(FINDING_KINDS).nullable(),
  subjectKey: z.string().nullable(),
});
export type LineForCsv = z.infer<typeof csvRow>;

/** A night by organization and settlement date. */
export interface NightRef {
  readonly organizationId: string;
  readonly date: string;
}

@Injectable()
export class SettlementLinesRepository {
  /** Writes one batch of a file's good lines (the caller's transaction). */
  async insert(
    tx: Sql,
    fileId: string,
    batch: readonly { readonly lineNumber: number; readonly line: SettlementLine }[],
  ): Promise<void> {
    if (batch.length === 0) return;
    const column = <T>(pick: (line: SettlementLine) => T): T[] =>
      batch.map((entry) => pick(entry.line));
    await tx.execute(
      `INSERT INTO settlement_lines (file_id, line_number, organization_id, settlement_date,
         payflow_payment_id, installment_id, transaction_type, currency, gross_minor, fee_minor,
         net_minor, booked_at, internal_ref, order_number)
       SELECT $1::uuid, * FROM unnest($2::int[], $3::text[], $4::date[], $5::text[], $6::text[],
         $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[], $12::timestamptz[],
         $13::text[], $14::text[])
       ON CONFLICT DO NOTHING`,
      [
        fileId,
        batch.map((entry) => entry.lineNumber),
        column((line) => line.organizationId),
        column((line) => line.settlementDate),
        column((line) => line.paymentId),
        column((line) => line.installmentId),
        column((line) => line.transactionType),
        column((line) => line.currency),
        column((line) => line.grossMinor),
        column((line) => line.feeMinor),
        column((line) => line.netMinor),
        column((line) => line.bookedAt),
        column((line) => line.internalRef),
        column((line) => line.orderNumber),
      ],
    );
  }

  /** Payflow payment ids on these files' lines, after `after`, in id order. */
  async paymentIdsOfFiles(
    sql: Sql,
    fileIds: readonly string[],
    after: string,
    limit: number,
  ): Promise<string[]> {
    const rows = await queryRows(
      sql,
      z.object({ id: z.string() }),
      `SELECT DISTINCT payflow_payment_id AS id FROM settlement_lines
        WHERE file_id = ANY($1::uuid[]) AND payflow_payment_id > $2
        ORDER BY 1 LIMIT $3`,
      [fileIds, after, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Every current line of these payments, over all nights. */
  currentOf(sql: Sql, payflowIds: readonly string[]): Promise<CurrentLine[]> {
    return queryRows(
      sql,
      lineRow,
      `SELECT l.file_id::text AS "fileId", l.line_number AS "lineNumber",
              l.organization_id AS "organizationId",
              to_char(l.settlement_date, 'YYYY-MM-DD') AS "settlementDate",
              l.payflow_payment_id AS "payflowPaymentId", l.installment_id AS "installmentId",
              l.transaction_type AS "transactionType", l.currency,
              l.gross_minor::text AS "grossMinor"
         FROM ${CURRENT} WHERE l.payflow_payment_id = ANY($1::text[])
        ORDER BY l.settlement_date, l.file_id, l.line_number`,
      [payflowIds],
    );
  }

  /** Records what the reconciliation made of each line; the number that changed. */
  apply(tx: Sql, results: readonly LineResult[]): Promise<number> {
    if (results.length === 0) return Promise.resolve(0);
    return tx.execute(
      `UPDATE settlement_lines l SET match = r.match, finding_kind = r.kind, subject_key = r.subject
         FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::text[])
              AS r (file_id, line_number, match, kind, subject)
        WHERE l.file_id = r.file_id AND l.line_number = r.line_number
          AND (l.match, l.finding_kind, l.subject_key) IS DISTINCT FROM (r.match, r.kind, r.subject)`,
      [
        results.map((result) => result.fileId),
        results.map((result) => result.lineNumber),
        results.map((result) => result.match),
        results.map((result) => result.findingKind),
        results.map((result) => result.subjectKey),
      ],
    );
  }

  /** Totals of the current lines of these nights, per organization, date and currency. */
  totals(sql: Sql, nights: readonly NightRef[]): Promise<LineTotals[]> {
    if (nights.length === 0) return Promise.resolve([]);
    return queryRows(
      sql,
      totalsRow,
      `SELECT l.organization_id AS "organizationId",
              to_char(l.settlement_date, 'YYYY-MM-DD') AS "settlementDate", l.currency,
              sum(l.gross_minor)::text AS "grossMinor", sum(l.fee_minor)::text AS "feeMinor",
              sum(l.net_minor)::text AS "netMinor", count(*)::int AS lines,
              (count(*) FILTER (WHERE l.match = 'matched'))::int AS "linesMatched",
              (count(DISTINCT (l.finding_kind, l.subject_key))
                 FILTER (WHERE l.finding_kind IS NOT NULL))::int AS findings
         FROM ${CURRENT}
         JOIN unnest($1::text[], $2::date[]) AS x (organization_id, settlement_date)
           ON x.organization_id = n.organization_id AND x.settlement_date = n.settlement_date
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [nights.map((night) => night.organizationId), nights.map((night) => night.date)],
    );
  }

  /** A page of one file's lines with their match, after `afterLine` (the CSV export). */
  page(sql: Sql, fileId: string, afterLine: number, limit: number): Promise<LineForCsv[]> {
    return queryRows(
      sql,
      csvRow,
      `SELECT file_id::text AS "fileId", line_number AS "lineNumber",
              organization_id AS "organizationId",
              to_char(settlement_date, 'YYYY-MM-DD') AS "settlementDate",
              payflow_payment_id AS "payflowPaymentId", installment_id AS "installmentId",
              transaction_type AS "transactionType", currency, gross_minor::text AS "grossMinor",
              fee_minor::text AS "feeMinor", net_minor::text AS "netMinor",
              to_char(booked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "bookedAt",
              internal_ref AS "internalRef", order_number AS "orderNumber", match,
              finding_kind AS "findingKind", subject_key AS "subjectKey"
         FROM settlement_lines WHERE file_id = $1::uuid AND line_number > $2
        ORDER BY line_number LIMIT $3`,
      [fileId, afterLine, limit],
    );
  }

  /** Of these Payflow ids, those with no current payment line (`not_settled` candidates). */
  async withoutPaymentLines(sql: Sql, payflowIds: readonly string[]): Promise<string[]> {
    if (payflowIds.length === 0) return [];
    const rows = await queryRows(
      sql,
      z.object({ id: z.string() }),
      `SELECT id FROM unnest($1::text[]) AS p (id)
        WHERE NOT EXISTS (SELECT 1 FROM ${CURRENT}
                           WHERE l.payflow_payment_id = p.id
                             AND lower(trim(l.transaction_type)) <> 'refund'
                             AND (lower(trim(l.transaction_type)) = 'payment' OR l.gross_minor >= 0))`,
      [payflowIds],
    );
    return rows.map((row) => row.id);
  }

  /** Of these Payflow ids, those with no line in these files (already matched by step 1). */
  async notOnFiles(
    sql: Sql,
    payflowIds: readonly string[],
    fileIds: readonly string[],
  ): Promise<string[]> {
    if (payflowIds.length === 0 || fileIds.length === 0) return [...payflowIds];
    const rows = await queryRows(
      sql,
      z.object({ id: z.string() }),
      `SELECT id FROM unnest($1::text[]) AS p (id)
        WHERE NOT EXISTS (SELECT 1 FROM settlement_lines l
                           WHERE l.file_id = ANY($2::uuid[]) AND l.payflow_payment_id = p.id)`,
      [payflowIds, fileIds],
    );
    return rows.map((row) => row.id);
  }

  /**
   * The current lines of these Payflow payments with their match, by date (an order's page).
   * Each by an index: the line by its payment, its file by id, and the night pointing at it
   * by the night's key (the file's organization, dates and format).
   */
  currentWithMatchOf(sql: Sql, payflowIds: readonly string[]): Promise<LineForCsv[]> {
    if (payflowIds.length === 0) return Promise.resolve([]);
    return queryRows(
      sql,
      csvRow,
      `SELECT l.file_id::text AS "fileId", l.line_number AS "lineNumber",
              l.organization_id AS "organizationId",
              to_char(l.settlement_date, 'YYYY-MM-DD') AS "settlementDate",
              l.payflow_payment_id AS "payflowPaymentId", l.installment_id AS "installmentId",
              l.transaction_type AS "transactionType", l.currency,
              l.gross_minor::text AS "grossMinor", l.fee_minor::text AS "feeMinor",
              l.net_minor::text AS "netMinor",
              to_char(l.booked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "bookedAt",
              l.internal_ref AS "internalRef", l.order_number AS "orderNumber", l.match,
              l.finding_kind AS "findingKind", l.subject_key AS "subjectKey"
         FROM settlement_lines l
         JOIN settlement_files f ON f.id = l.file_id
         JOIN settlement_nights n
           ON n.organization_id = f.organization_id AND n.format = f.format
          AND n.settlement_date BETWEEN f.date_from AND f.date_to AND n.file_id = l.file_id
        WHERE l.payflow_payment_id = ANY($1::text[])
        ORDER BY l.settlement_date, l.file_id, l.line_number`,
      [payflowIds],
    );
  }
}
