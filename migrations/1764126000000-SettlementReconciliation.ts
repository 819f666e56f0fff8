import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Settlement reconciliation (issue 29 §1, CONTRACT §10): the money settled matched to the
 * money due.
 *
 * - `settlement_lines`: the good rows of every stored file version (money in integer minor
 *   units), written with the file; only the version a night points at counts. `match` and
 *   `finding_kind`/`subject_key` say what the last reconciliation made of each line (null:
 *   not reconciled yet).
 * - `settlement_findings`: one row per finding (kind + subject), open until a later line
 *   settles it (`closed_how = 'settled'`) or a person acknowledges it (`acknowledged`, with
 *   `closed_reason` and `closed_by`). At most one open finding per kind and subject.
 * - `settlement_totals`: the totals last published (`settlement.reconciled`) per
 *   organization, settlement date and currency, so that reconciling again publishes nothing
 *   when nothing changed.
 */
export class SettlementReconciliation1764126000000 implements MigrationInterface {
  name = 'SettlementReconciliation1764126000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "settlement_lines" (
        "file_id" uuid NOT NULL,
        "line_number" int NOT NULL,
        "organization_id" text NOT NULL,
        "settlement_date" date NOT NULL,
        "payflow_payment_id" text,
        "installment_id" text,
        "transaction_type" text NOT NULL,
        "currency" char(3) NOT NULL,
        "gross_minor" bigint NOT NULL,
        "fee_minor" bigint NOT NULL,
        "net_minor" bigint NOT NULL,
        "booked_at" timestamptz NOT NULL,
        "internal_ref" text,
        "order_number" text,
        "match" text,
        "finding_kind" text,
        "subject_key" text,
        PRIMARY KEY ("file_id", "line_number")
      )`);
    await queryRunner.query(
      `CREATE INDEX "settlement_lines_file_payment_idx" ON "settlement_lines" ("file_id", "payflow_payment_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "settlement_lines_payment_idx" ON "settlement_lines" ("payflow_payment_id")`,
    );
    // The lines that count are those of the file a night points at: found by that pointer.
    await queryRunner.query(
      `CREATE INDEX "settlement_nights_file_idx" ON "settlement_nights" ("file_id")`,
    );
    await queryRunner.query(`
      CREATE TABLE "settlement_findings" (
        "id" bigserial PRIMARY KEY,
        "kind" text NOT NULL,
        "subject_key" text NOT NULL,
        "organization_id" text NOT NULL,
        "payflow_payment_id" text NOT NULL,
        "order_id" text,
        "installment_id" text,
        "currency" char(3) NOT NULL,
        "expected_minor" bigint,
        "settled_minor" bigint NOT NULL,
        "opened_at" timestamptz NOT NULL DEFAULT now(),
        "closed_at" timestamptz,
        "closed_how" text,
        "closed_reason" text,
        "closed_by" text
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "settlement_findings_open_key" ON "settlement_findings" ("kind", "subject_key") WHERE "closed_at" IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "settlement_findings_payment_idx" ON "settlement_findings" ("payflow_payment_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "settlement_findings_subject_idx" ON "settlement_findings" ("kind", "subject_key", "id")`,
    );
    await queryRunner.query(`
      CREATE TABLE "settlement_totals" (
        "organization_id" text NOT NULL,
        "settlement_date" date NOT NULL,
        "currency" text NOT NULL,
        "gross_minor" bigint NOT NULL,
        "fee_minor" bigint NOT NULL,
        "net_minor" bigint NOT NULL,
        "lines" int NOT NULL,
        "lines_matched" int NOT NULL,
        "findings" int NOT NULL,
        "published_at" timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY ("organization_id", "settlement_date", "currency")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "settlement_totals"`);
    await queryRunner.query(`DROP TABLE "settlement_findings"`);
    await queryRunner.query(`DROP TABLE "settlement_lines"`);
    await queryRunner.query(`DROP INDEX "settlement_nights_file_idx"`);
  }
}
