import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Nightly settlements (issue 5).
 *
 * - `settlement_nights`: one row per (organization, date, format) the bridge owes a pull:
 *   `missing` until a pull succeeded, then `pulled` with the file it produced. A run
 *   creates the rows for every night since the last one it knows, so a night missed while
 *   the worker was down, or while Payflow failed, stays visible until it is caught up.
 *   `tracked_by` says who first owed it: the nightly run (`cron`) or a pull by hand
 *   (`cli`); the run continues from the newest night it tracked itself, so a pull by
 *   hand of an old date never makes it catch up the months in between.
 * - `settlement_files`: every distinct content pulled for a (organization, date range,
 *   format), numbered by `version`; a re-pull that brings the same SHA-256 stores nothing.
 * - `settlement_file_chunks`: the raw bytes, in order, in pieces of about 1 MiB, so a big
 *   file is stored as it streams in and never held in memory whole.
 * - `settlement_file_errors`: the rows that did not parse, by line number.
 */
export class Settlements1763794800000 implements MigrationInterface {
  name = 'Settlements1763794800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "settlement_files" (
        "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        "organization_id" text NOT NULL,
        "date_from" date NOT NULL,
        "date_to" date NOT NULL,
        "format" text NOT NULL,
        "version" int NOT NULL,
        "previous_file_id" uuid,
        "sha256" char(64) NOT NULL,
        "size_bytes" bigint NOT NULL,
        "row_count" int NOT NULL,
        "bad_row_count" int NOT NULL,
        "content_type" text NOT NULL,
        "trigger" text NOT NULL,
        "pulled_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "settlement_files_version_key" ON "settlement_files" ("organization_id", "date_from", "date_to", "format", "version")`,
    );
    await queryRunner.query(`
      CREATE TABLE "settlement_file_chunks" (
        "file_id" uuid NOT NULL,
        "seq" int NOT NULL,
        "data" bytea NOT NULL,
        PRIMARY KEY ("file_id", "seq")
      )`);
    await queryRunner.query(`
      CREATE TABLE "settlement_file_errors" (
        "file_id" uuid NOT NULL,
        "line_number" int NOT NULL,
        "message" text NOT NULL,
        PRIMARY KEY ("file_id", "line_number")
      )`);
    await queryRunner.query(`
      CREATE TABLE "settlement_nights" (
        "organization_id" text NOT NULL,
        "settlement_date" date NOT NULL,
        "format" text NOT NULL,
        "status" text NOT NULL,
        "tracked_by" text NOT NULL,
        "file_id" uuid,
        "attempts" int NOT NULL DEFAULT 0,
        "last_attempt_at" timestamptz,
        "last_error" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "pulled_at" timestamptz,
        PRIMARY KEY ("organization_id", "settlement_date", "format")
      )`);
    await queryRunner.query(
      `CREATE INDEX "settlement_nights_missing_idx" ON "settlement_nights" ("organization_id", "settlement_date") WHERE "status" = 'missing'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "settlement_nights"`);
    await queryRunner.query(`DROP TABLE "settlement_file_errors"`);
    await queryRunner.query(`DROP TABLE "settlement_file_chunks"`);
    await queryRunner.query(`DROP TABLE "settlement_files"`);
  }
}
