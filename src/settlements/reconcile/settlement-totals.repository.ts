/**
 * The only owner of `settlement_totals`' SQL: the totals last published per organization,
 * settlement date and currency. Storing totals returns only those that changed (or are
 * new): the ones to publish, so that reconciling twice publishes nothing new.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../../database/database.js';
import { queryRows } from '../../database/parsed-rows.js';
import { minorUnitsField } from '../../database/row-schemas.js';
import type { LineTotals } from './settlement-lines.repository.js';

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

const COLUMNS = `organization_id AS "organizationId",
  to_char(settlement_date, 'YYYY-MM-DD') AS "settlementDate", currency,
  gross_minor::text AS "grossMinor", fee_minor::text AS "feeMinor",
  net_minor::text AS "netMinor", lines, lines_matched AS "linesMatched", findings`;

@Injectable()
export class SettlementTotalsRepository {
  /** Stores the totals; returns those that are new or differ from the ones stored. */
  async storeChanged(tx: Sql, totals: readonly LineTotals[]): Promise<LineTotals[]> {
    if (totals.length === 0) return [];
    const column = <T>(pick: (total: LineTotals) => T): T[] => totals.map(pick);
    return queryRows(
      tx,
      totalsRow,
      `INSERT INTO settlement_totals AS t (organization_id, settlement_date, currency,
         gross_minor, fee_minor, net_minor, lines, lines_matched, findings)
       SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::bigint[], $5::bigint[],
         $6::bigint[], $7::int[], $8::int[], $9::int[])
       ON CONFLICT (organization_id, settlement_date, currency) DO UPDATE
         SET gross_minor = EXCLUDED.gross_minor, fee_minor = EXCLUDED.fee_minor,
             net_minor = EXCLUDED.net_minor, lines = EXCLUDED.lines,
             lines_matched = EXCLUDED.lines_matched, findings = EXCLUDED.findings,
             published_at = now()
         WHERE (t.gross_minor, t.fee_minor, t.net_minor, t.lines, t.lines_matched, t.findings)
               IS DISTINCT FROM (EXCLUDED.gross_minor, EXCLUDED.fee_minor, EXCLUDED.net_minor,
                                 EXCLUDED.lines, EXCLUDED.lines_matched, EXCLUDED.findings)
       RETURNING ${COLUMNS}`,
      [
        column((total) => total.organizationId),
        column((total) => total.settlementDate),
        column((total) => total.currency),
        column((total) => total.grossMinor),
        column((total) => total.feeMinor),
        column((total) => total.netMinor),
        column((total) => total.lines),
        column((total) => total.linesMatched),
        column((total) => total.findings),
      ],
    );
  }

  /** The stored totals of a range (the CSV's totals rows). */
  list(
    sql: Sql,
    range: { organizationId: string | null; from: string; to: string },
  ): Promise<LineTotals[]> {
    return queryRows(
      sql,
      totalsRow,
      `SELECT ${COLUMNS} FROM settlement_totals
        WHERE settlement_date BETWEEN $2::date AND $3::date
          AND ($1::text IS NULL OR organization_id = $1)
        ORDER BY organization_id, settlement_date, currency`,
      [range.organizationId, range.from, range.to],
    );
  }

  /**
   * The console's page of totals (read only): the newest settlement date first, then by
   * organization and currency, at most `limit` rows.
   */
  listNewestFirst(
    sql: Sql,
    range: { organizationId: string | null; from: string; to: string },
    limit: number,
  ): Promise<LineTotals[]> {
    return queryRows(
      sql,
      totalsRow,
      `SELECT ${COLUMNS} FROM settlement_totals
        WHERE settlement_date BETWEEN $2::date AND $3::date
          AND ($1::text IS NULL OR organization_id = $1)
        ORDER BY settlement_date DESC, organization_id, currency LIMIT $4`,
      [range.organizationId, range.from, range.to, limit],
    );
  }
}
