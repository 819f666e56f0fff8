import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `unexplained_effects` (issue 26 §1): installments and documents that Payflow holds for a
 * payment of the bridge and that no event of the order explains (no row in `installments` or
 * `documents`, no live attempt that could be about to record it), as a webhook's refetch,
 * the reconciliation poll or a probe found them. One row per (payment, kind, Payflow id), so
 * that repeated reads report an effect once; `last_seen_at` moves with every read that still
 * finds it. Read by order (`order show`, the console's timeline). Nothing is ever deleted.
 */
export class UnexplainedEffects1764100000000 implements MigrationInterface {
  name = 'UnexplainedEffects1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "unexplained_effects" (
        "id" bigserial PRIMARY KEY,
        "order_id" text NOT NULL,
        "payment_id" uuid NOT NULL,
        "kind" text NOT NULL,
        "payflow_id" text NOT NULL,
        "due_date" date,
        "gross_minor" bigint,
        "currency" char(3),
        "provider_status" text,
        "file_name" text,
        "first_seen_at" timestamptz NOT NULL DEFAULT now(),
        "first_seen_by" text NOT NULL,
        "last_seen_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "unexplained_effects_payment_kind_payflow_id_key"
         ON "unexplained_effects" ("payment_id", "kind", "payflow_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "unexplained_effects_order_idx" ON "unexplained_effects" ("order_id", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "unexplained_effects"`);
  }
}
