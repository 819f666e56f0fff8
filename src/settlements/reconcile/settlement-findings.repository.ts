/**
 * The only owner of `settlement_findings`' SQL: at most one open finding per kind and
 * subject (a partial unique index), opened by the reconciliation, closed by it when a later
 * line settles the subject (`settled`) or by a person (`acknowledged`, with why and who).
 * A finding a person acknowledged is not opened again while the same amounts stand.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';
import { minorUnitsField, timestampField } from '../../database/row-schemas.js';
import type { OpenFindings } from './findings.metrics.js';
import { FINDING_KINDS, type Finding } from './settlement-match.js';

const findingRow = z.object({
  id: z.string(),
  kind: z.enum(FINDING_KINDS),
  subjectKey: z.string(),
  organizationId: z.string(),
  payflowPaymentId: z.string(),
  orderId: z.string().nullable(),
  installmentId: z.string().nullable(),
  currency: z.string(),
  expectedMinor: minorUnitsField.nullable(),
  settledMinor: minorUnitsField,
  openedAt: timestampField,
  closedAt: timestampField.nullable(),
  closedHow: z.enum(['settled', 'acknowledged']).nullable(),
  closedReason: z.string().nullable(),
  closedBy: z.string().nullable(),
});
export type FindingRow = z.infer<typeof findingRow>;

const COLUMNS = `id::text AS id, kind, subject_key AS "subjectKey",
  organization_id AS "organizationId", payflow_payment_id AS "payflowPaymentId",
  order_id AS "orderId", installment_id AS "installmentId", currency,
  expected_minor::text AS "expectedMinor", settled_minor::text AS "settledMinor",
  opened_at AS "openedAt", closed_at AS "closedAt", closed_how AS "closedHow",
  closed_reason AS "closedReason", closed_by AS "closedBy"`;

const keyOf = (finding: Pick<Finding, 'kind' | 'subjectKey'>): string =>
  `${finding.kind}|${finding.subjectKey}`;

@Injectable()
export class SettlementFindingsRepository {
  /**
   * Opens the findings not open yet (and not acknowledged with the same amounts); returns
   * those it opened: the ones to publish. A finding still open keeps its row, its amounts
   * brought up to date.
   */
  async open(tx: Sql, findings: readonly Finding[]): Promise<FindingRow[]> {
    if (findings.length === 0) return [];
    const column = <T>(pick: (finding: Finding) => T): T[] => findings.map(pick);
    const params = [
      column((finding) => finding.kind),
      column((finding) => finding.subjectKey),
      column((finding) => finding.organizationId),
      column((finding) => finding.payflowPaymentId),
      column((finding) => finding.orderId),
      column((finding) => finding.installmentId),
      column((finding) => finding.currency),
      column((finding) => finding.expectedMinor),
      column((finding) => finding.settledMinor),
    ];
    const source = `unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
        $6::text[], $7::text[], $8::bigint[], $9::bigint[])
        AS f (kind, subject_key, organization_id, payflow_payment_id, order_id, installment_id,
              currency, expected_minor, settled_minor)`;
    await tx.execute(
      `UPDATE settlement_findings s
          SET expected_minor = f.expected_minor, settled_minor = f.settled_minor
         FROM ${source}
        WHERE s.closed_at IS NULL AND s.kind = f.kind AND s.subject_key = f.subject_key
          AND (s.expected_minor, s.settled_minor) IS DISTINCT FROM (f.expected_minor, f.settled_minor)`,
      params,
    );
    return queryRows(
      tx,
      findingRow,
      `INSERT INTO settlement_findings (kind, subject_key, organization_id, payflow_payment_id,
         order_id, installment_id, currency, expected_minor, settled_minor)
       SELECT f.* FROM ${source}
        WHERE NOT EXISTS (
          SELECT 1 FROM settlement_findings a
           WHERE a.kind = f.kind AND a.subject_key = f.subject_key
             AND a.closed_how = 'acknowledged'
             AND a.expected_minor IS NOT DISTINCT FROM f.expected_minor
             AND a.settled_minor = f.settled_minor)
       ON CONFLICT (kind, subject_key) WHERE closed_at IS NULL DO NOTHING
       RETURNING ${COLUMNS}`,
      params,
    );
  }

  /** Closes as `settled` the open findings of these payments that are not in `standing`. */
  async closeSettled(
    tx: Sql,
    payflowIds: readonly string[],
    standing: readonly Finding[],
  ): Promise<number> {
    if (payflowIds.length === 0) return 0;
    return tx.execute(
      `UPDATE settlement_findings SET closed_at = now(), closed_how = 'settled'
        WHERE closed_at IS NULL AND payflow_payment_id = ANY($1::text[])
          AND NOT (kind || '|' || subject_key = ANY($2::text[]))`,
      [payflowIds, standing.map(keyOf)],
    );
  }

  /** Payflow ids with an open finding (of one organization, or all), after `after`. */
  async openPaymentIds(
    sql: Sql,
    organizationId: string | null,
    after: string,
    limit: number,
  ): Promise<string[]> {
    const rows = await queryRows(
      sql,
      z.object({ id: z.string() }),
      `SELECT DISTINCT payflow_payment_id AS id FROM settlement_findings
        WHERE closed_at IS NULL AND ($1::text IS NULL OR organization_id = $1)
          AND payflow_payment_id > $2
        ORDER BY 1 LIMIT $3`,
      [organizationId, after, limit],
    );
    return rows.map((row) => row.id);
  }

  /** The newest finding of each of these kind|subject keys (the CSV names it). */
  async latestOf(sql: Sql, keys: readonly string[]): Promise<Map<string, FindingRow>> {
    if (keys.length === 0) return new Map();
    const rows = await queryRows(
      sql,
      findingRow,
      `SELECT DISTINCT ON (kind, subject_key) ${COLUMNS} FROM settlement_findings
        WHERE kind || '|' || subject_key = ANY($1::text[])
        ORDER BY kind, subject_key, id DESC`,
      [keys],
    );
    return new Map(rows.map((row) => [keyOf(row), row]));
  }

  async byId(sql: Sql, id: string): Promise<FindingRow | null> {
    const [row] = await queryRows(
      sql,
      findingRow,
      `SELECT ${COLUMNS} FROM settlement_findings WHERE id = $1::bigint`,
      [id],
    );
    return row ?? null;
  }

  /** Closes an open finding as acknowledged by a person; null when it was not open. */
  async acknowledge(tx: Sql, id: string, reason: string, by: string): Promise<FindingRow | null> {
    const [row] = await queryRows(
      tx,
      findingRow,
      `UPDATE settlement_findings
          SET closed_at = now(), closed_how = 'acknowledged', closed_reason = $2, closed_by = $3
        WHERE id = $1::bigint AND closed_at IS NULL
       RETURNING ${COLUMNS}`,
      [id, reason, by],
    );
    return row ?? null;
  }

  /**
   * The console's list (read only): open findings first, then the closed ones, newest
   * first in each; of one organization or all; after the keyset `after` (the last row of
   * the previous page), at most `limit` rows. Each part walks the primary key backwards.
   */
  async listOpenFirst(
    sql: Sql,
    organizationId: string | null,
    after: { readonly open: boolean; readonly id: string } | null,
    limit: number,
  ): Promise<FindingRow[]> {
    const part = (open: boolean, afterId: string | null, count: number): Promise<FindingRow[]> =>
      queryRows(
        sql,
        findingRow,
        `SELECT ${COLUMNS} FROM settlement_findings
          WHERE closed_at IS ${open ? '' : 'NOT '}NULL
            AND ($1::text IS NULL OR organization_id = $1)
            AND ($2::bigint IS NULL OR id < $2::bigint)
          ORDER BY id DESC LIMIT $3`,
        [organizationId, afterId, count],
      );
    const rows = after === null || after.open ? await part(true, after?.id ?? null, limit) : [];
    if (rows.length >= limit) return rows;
    const closedAfter = after !== null && !after.open ? after.id : null;
    return [...rows, ...(await part(false, closedAfter, limit - rows.length))];
  }

  /** How many findings are open (of one organization, or all). */
  async countOpen(sql: Sql, organizationId: string | null): Promise<number> {
    const [row] = await queryRows(
      sql,
      z.object({ open: z.number().int() }),
      `SELECT count(*)::int AS open FROM settlement_findings
        WHERE closed_at IS NULL AND ($1::text IS NULL OR organization_id = $1)`,
      [organizationId],
    );
    return row?.open ?? 0;
  }

  /** Every finding of these Payflow payments, open or closed, oldest first (an order's page). */
  ofPayments(sql: Sql, payflowIds: readonly string[]): Promise<FindingRow[]> {
    if (payflowIds.length === 0) return Promise.resolve([]);
    return queryRows(
      sql,
      findingRow,
      `SELECT ${COLUMNS} FROM settlement_findings
        WHERE payflow_payment_id = ANY($1::text[]) ORDER BY id`,
      [payflowIds],
    );
  }

  /** The open findings by kind, with when the oldest of each opened (the metrics' scrape). */
  openByKind(sql: Sql): Promise<OpenFindings[]> {
    return queryRows(
      sql,
      z.object({
        kind: z.enum(FINDING_KINDS),
        count: z.number().int(),
        oldestOpenedAt: timestampField,
      }),
      `SELECT kind, count(*)::int AS count, min(opened_at) AS "oldestOpenedAt"
         FROM settlement_findings WHERE closed_at IS NULL GROUP BY kind`,
      [],
    );
  }
}
