import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `in_doubt_verdicts`: what a person decided about a Payflow call in doubt (`in-doubt
 * resolve`): the payment found at Payflow, or "never taken". Kept as the order's history
 * (`order show`), and read to make the command idempotent; `replayed_at` says the order's
 * parked events were republished after the verdict, so a run cut short finishes the job.
 */
export class InDoubtVerdicts1764046800000 implements MigrationInterface {
  name = 'InDoubtVerdicts1764046800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "in_doubt_verdicts" (
        "id" bigserial PRIMARY KEY,
        "order_id" text NOT NULL,
        "event_id" uuid NOT NULL,
        "attempt_id" bigint NOT NULL,
        "command" text NOT NULL,
        "verdict" text NOT NULL,
        "payflow_id" text,
        "payment_id" uuid,
        "decided_by" text NOT NULL,
        "decided_at" timestamptz NOT NULL DEFAULT now(),
        "replayed_at" timestamptz,
        "replayed_letters" int
      )`);
    await queryRunner.query(
      `CREATE INDEX "in_doubt_verdicts_order_idx" ON "in_doubt_verdicts" ("order_id", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "in_doubt_verdicts"`);
  }
}
