/**
 * The settlement tables (see migrations/1763794800000-Settlements.ts) behind one narrow
 * class: files and their raw chunks and bad rows, and the nights the bridge owes a pull.
 * Every write takes the caller's transaction (`Sql`), so a file, its lines in the outbox
 * and its night's status commit together or not at all.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { countsByHour, queryRows, type HourlyCount } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';
import type { BadRow, SettlementFileVersion } from './settlement-events.js';

/** (organization, date, format): one night's file. */
export interface NightKey {
  readonly organizationId: string;
  readonly date: string;
  readonly format: string;
}

export interface SettlementFileRow extends SettlementFileVersion {
  readonly id: string;
  readonly rowCount: number;
  readonly badRowCount: number;
  readonly contentType: string;
  readonly trigger: string;
}

export interface NightRow {
  readonly organizationId: string;
  readonly date: string;
  readonly format: string;
  /** `forgotten`: an operator gave the night up (`settlements forget`); no run pulls it. */
  readonly status: 'missing' | 'pulled' | 'forgotten';
  readonly fileId: string | null;
  readonly attempts: number;
  readonly lastAttemptAt: Date | null;
  readonly lastError: string | null;
}

const nightFileRow = z.object({
  organizationId: z.string(),
  date: z.string(),
  format: z.string(),
  status: z.enum(['missing', 'pulled', 'forgotten']),
  fileId: z.string().nullable(),
  attempts: z.number().int(),
  lastAttemptAt: timestampField.nullable(),
  lastError: z.string().nullable(),
  trackedBy: z.string(),
  pulledAt: timestampField.nullable(),
  /** The stored file's version: 2 or more when Payflow's file changed after a first pull. */
  version: z.number().int().nullable(),
  rowCount: z.number().int().nullable(),
  badRowCount: z.number().int().nullable(),
});

/** A tracked night with the file it holds (the console's settlement page). */
export type NightWithFile = z.infer<typeof nightFileRow>;

/** pg_advisory_xact_lock namespace of one night's pull (the key is a hash of the night). */
export const NIGHT_LOCK_NAMESPACE = 0x73746c02;

const FILE_COLUMNS = `id::text AS id, organization_id AS "organizationId",
  to_char(date_from, 'YYYY-MM-DD') AS "dateFrom", to_char(date_to, 'YYYY-MM-DD') AS "dateTo",
  format, version, previous_file_id::text AS "previousFileId", sha256,
  size_bytes::float8 AS "sizeBytes", row_count AS "rowCount", bad_row_count AS "badRowCount",
  content_type AS "contentType", trigger, pulled_at AS "pulledAt"`;

const NIGHT_COLUMNS = `organization_id AS "organizationId",
  to_char(settlement_date, 'YYYY-MM-DD') AS date, format, status, file_id::text AS "fileId",
  attempts, last_attempt_at AS "lastAttemptAt", last_error AS "lastError"`;

/** Tracked nights (`n`) with the file each holds (`f`), as `nightFileRow` parses them. */
const NIGHTS_WITH_FILES = `SELECT n.organization_id AS "organizationId",
    to_char(n.settlement_date, 'YYYY-MM-DD') AS date, n.format, n.status,
    n.file_id::text AS "fileId", n.attempts, n.last_attempt_at AS "lastAttemptAt",
    n.last_error AS "lastError", n.tracked_by AS "trackedBy", n.pulled_at AS "pulledAt",
    f.version, f.row_count AS "rowCount", f.bad_row_count AS "badRowCount"
  FROM settlement_nights n LEFT JOIN settlement_files f ON f.id = n.file_id`;

@Injectable()
export class SettlementRepository {
  /** Serializes pulls of one night across processes until the transaction ends. */
  async lockNight(tx: Sql, night: NightKey): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
      NIGHT_LOCK_NAMESPACE,
      `${night.organizationId}|${night.date}|${night.format}`,
    ]);
  }

  async night(sql: Sql, night: NightKey): Promise<NightRow | null> {
    const [row] = await sql.query<NightRow>(
      `SELECT ${NIGHT_COLUMNS} FROM settlement_nights
        WHERE organization_id = $1 AND settlement_date = $2::date AND format = $3`,
      [night.organizationId, night.date, night.format],
    );
    return row ?? null;
  }

  /** The newest version of a night's file, or null when none was stored. */
  async latestFile(sql: Sql, night: NightKey): Promise<SettlementFileRow | null> {
    const [row] = await sql.query<SettlementFileRow>(
      `SELECT ${FILE_COLUMNS} FROM settlement_files
        WHERE organization_id = $1 AND date_from = $2::date AND date_to = $2::date AND format = $3
        ORDER BY version DESC LIMIT 1`,
      [night.organizationId, night.date, night.format],
    );
    return row ?? null;
  }

  async insertFile(tx: Sql, file: Omit<SettlementFileRow, 'pulledAt'>): Promise<Date> {
    const [row] = await tx.query<{ pulledAt: Date }>(
      `INSERT INTO settlement_files (id, organization_id, date_from, date_to, format, version,
         previous_file_id, sha256, size_bytes, row_count, bad_row_count, content_type, trigger)
       VALUES ($1, $2, $3::date, $4::date, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       RETURNING pulled_at AS "pulledAt"`,
      [
        file.id,
        file.organizationId,
        file.dateFrom,
        file.dateTo,
        file.format,
        file.version,
        file.previousFileId,
        file.sha256,
        file.sizeBytes,
        file.rowCount,
        file.badRowCount,
        file.contentType,
        file.trigger,
      ],
    );
    return row!.pulledAt;
  }

  async insertChunk(tx: Sql, fileId: string, seq: number, data: Buffer): Promise<void> {
    await tx.execute(
      'INSERT INTO settlement_file_chunks (file_id, seq, data) VALUES ($1, $2, $3)',
      [fileId, seq, data],
    );
  }

  async insertErrors(tx: Sql, fileId: string, errors: readonly BadRow[]): Promise<void> {
    if (errors.length === 0) return;
    await tx.execute(
      `INSERT INTO settlement_file_errors (file_id, line_number, message)
       SELECT $1::uuid, line, message FROM unnest($2::int[], $3::text[]) AS e(line, message)
       ON CONFLICT DO NOTHING`,
      [fileId, errors.map((error) => error.lineNumber), errors.map((error) => error.error)],
    );
  }

  async errors(sql: Sql, fileId: string, limit: number): Promise<BadRow[]> {
    return sql.query<BadRow>(
      `SELECT line_number AS "lineNumber", message AS error FROM settlement_file_errors
        WHERE file_id = $1::uuid ORDER BY line_number LIMIT $2`,
      [fileId, limit],
    );
  }

  // ------------------------------------------------------------------ nights

  /** The newest night the nightly run tracked for an organization and format, or null. */
  async newestNight(sql: Sql, organizationId: string, format: string): Promise<string | null> {
    const [row] = await sql.query<{ date: string | null }>(
      `SELECT to_char(max(settlement_date), 'YYYY-MM-DD') AS date FROM settlement_nights
        WHERE organization_id = $1 AND format = $2 AND tracked_by = 'cron'`,
      [organizationId, format],
    );
    return row?.date ?? null;
  }

  /** Starts tracking nights as `missing` (nights already tracked are left as they are). */
  async trackNights(
    sql: Sql,
    organizationId: string,
    format: string,
    dates: readonly string[],
  ): Promise<number> {
    if (dates.length === 0) return 0;
    return sql.execute(
      `INSERT INTO settlement_nights (organization_id, settlement_date, format, status, tracked_by)
       SELECT $1, d, $2, 'missing', 'cron' FROM unnest($3::date[]) AS d
       ON CONFLICT DO NOTHING`,
      [organizationId, format, dates],
    );
  }

  /** An organization's missing nights, oldest first. */
  async missingNights(sql: Sql, organizationId: string, format: string): Promise<NightRow[]> {
    return sql.query<NightRow>(
      `SELECT ${NIGHT_COLUMNS} FROM settlement_nights
        WHERE organization_id = $1 AND format = $2 AND status = 'missing'
        ORDER BY settlement_date`,
      [organizationId, format],
    );
  }

  /** Every tracked night in a date range (all organizations when `organizationId` is null). */
  async nights(
    sql: Sql,
    range: {
      from: string;
      to: string;
      organizationId: string | null;
      status?: 'missing' | 'forgotten';
    },
  ): Promise<NightRow[]> {
    return sql.query<NightRow>(
      `SELECT ${NIGHT_COLUMNS} FROM settlement_nights
        WHERE settlement_date BETWEEN $1::date AND $2::date
          AND ($3::text IS NULL OR organization_id = $3)
          AND ($4::text IS NULL OR status = $4)
        ORDER BY settlement_date, organization_id, format`,
      [range.from, range.to, range.organizationId, range.status ?? null],
    );
  }

  /** An organization's pulled nights from `from` to `to`, oldest first (the nightly recheck). */
  async pulledNights(
    sql: Sql,
    organizationId: string,
    format: string,
    range: { from: string; to: string },
  ): Promise<NightRow[]> {
    return sql.query<NightRow>(
      `SELECT ${NIGHT_COLUMNS} FROM settlement_nights
        WHERE organization_id = $1 AND format = $2 AND status = 'pulled'
          AND settlement_date BETWEEN $3::date AND $4::date
        ORDER BY settlement_date`,
      [organizationId, format, range.from, range.to],
    );
  }

  /**
   * Gives up the `missing` nights of `date` (of one organization, or all when null, and
   * of `format`, or all when null): they become `forgotten`, and no run pulls them again.
   * Returns every tracked night of that date, as it is now, with `forgotten` true for
   * those this call changed.
   */
  async forgetNights(
    sql: Sql,
    date: string,
    organizationId: string | null,
    format: string | null,
  ): Promise<{ night: NightRow; forgotten: boolean }[]> {
    const changed = await sql.query<{ organizationId: string; format: string }>(
      `UPDATE settlement_nights SET status = 'forgotten'
        WHERE settlement_date = $1::date AND status = 'missing'
          AND ($2::text IS NULL OR organization_id = $2) AND ($3::text IS NULL OR format = $3)
        RETURNING organization_id AS "organizationId", format`,
      [date, organizationId, format],
    );
    const forgotten = new Set(changed.map((row) => `${row.organizationId}\u0000${row.format}`));
    const nights = await sql.query<NightRow>(
      `SELECT ${NIGHT_COLUMNS} FROM settlement_nights
        WHERE settlement_date = $1::date
          AND ($2::text IS NULL OR organization_id = $2) AND ($3::text IS NULL OR format = $3)
        ORDER BY organization_id, format`,
      [date, organizationId, format],
    );
    return nights.map((night) => ({
      night,
      forgotten: forgotten.has(`${night.organizationId}\u0000${night.format}`),
    }));
  }

  async markPulled(
    tx: Sql,
    night: NightKey,
    fileId: string,
    trackedBy: 'cron' | 'cli',
  ): Promise<void> {
    await tx.execute(
      `INSERT INTO settlement_nights (organization_id, settlement_date, format, status, file_id,
         attempts, last_attempt_at, pulled_at, tracked_by)
       VALUES ($1, $2::date, $3, 'pulled', $4, 1, now(), now(), $5)
       ON CONFLICT (organization_id, settlement_date, format) DO UPDATE
         SET status = 'pulled', file_id = EXCLUDED.file_id,
             attempts = settlement_nights.attempts + 1, last_attempt_at = now(),
             last_error = NULL, pulled_at = now()`,
      [night.organizationId, night.date, night.format, fileId, trackedBy],
    );
  }

  /** A failed attempt: a night not pulled yet stays `missing`; a pulled one keeps its file. */
  async recordFailure(
    sql: Sql,
    night: NightKey,
    error: string,
    trackedBy: 'cron' | 'cli',
  ): Promise<void> {
    await sql.execute(
      `INSERT INTO settlement_nights (organization_id, settlement_date, format, status,
         attempts, last_attempt_at, last_error, tracked_by)
       VALUES ($1, $2::date, $3, 'missing', 1, now(), $4, $5)
       ON CONFLICT (organization_id, settlement_date, format) DO UPDATE
         SET attempts = settlement_nights.attempts + 1, last_attempt_at = now(),
             last_error = EXCLUDED.last_error`,
      [night.organizationId, night.date, night.format, error, trackedBy],
    );
  }

  /**
   * The tracked nights from `from` to `to` (all organizations when `organizationId` is
   * null) with the version and size of the file each holds, by organization then night.
   */
  nightsWithFiles(
    sql: Sql,
    range: { from: string; to: string; organizationId: string | null },
  ): Promise<NightWithFile[]> {
    return queryRows(
      sql,
      nightFileRow,
      `${NIGHTS_WITH_FILES}
        WHERE n.settlement_date BETWEEN $1::date AND $2::date
          AND ($3::text IS NULL OR n.organization_id = $3)
        ORDER BY n.organization_id, n.settlement_date DESC, n.format`,
      [range.from, range.to, range.organizationId],
    );
  }

  /** The night pulled most recently (any organization), or null. */
  async lastPulled(sql: Sql): Promise<NightWithFile | null> {
    const [row] = await queryRows(
      sql,
      nightFileRow,
      `${NIGHTS_WITH_FILES}
        WHERE n.pulled_at IS NOT NULL ORDER BY n.pulled_at DESC LIMIT 1`,
      [],
    );
    return row ?? null;
  }

  /** Files stored per hour since `since` (hours without any are left out). */
  filesByHour(sql: Sql, since: Date): Promise<HourlyCount[]> {
    return countsByHour(sql, 'settlement_files', 'pulled_at', since);
  }

  /**
   * Stored file versions of the nights from `from` to `to` (all organizations when
   * `organizationId` is null) that no night points at any more: the versions replaced.
   */
  async replacedFiles(
    sql: Sql,
    range: { from: string; to: string; organizationId: string | null },
  ): Promise<string[]> {
    const rows = await sql.query<{ id: string }>(
      `SELECT f.id::text AS id FROM settlement_files f
        WHERE f.date_from BETWEEN $1::date AND $2::date
          AND ($3::text IS NULL OR f.organization_id = $3)
          AND NOT EXISTS (SELECT 1 FROM settlement_nights n WHERE n.file_id = f.id)`,
      [range.from, range.to, range.organizationId],
    );
    return rows.map((row) => row.id);
  }
}
