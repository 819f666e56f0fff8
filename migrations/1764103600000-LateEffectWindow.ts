import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The late-effect window (PAYFLOW_LATE_EFFECT_WINDOW) on `command_attempts`:
 * - `last_sent_at`: when the attempt's latest request left (`sent_at` keeps the first). A
 *   call that sends again (a 401 refresh) may be applied from its latest request, so the
 *   window counts from this one. Null on rows older than this column: `sent_at` stands in.
 * - `held_since`, `held_until`: a read of Payflow found the call not applied while its
 *   request could still land; the attempt is held (no second call) until `held_until`
 *   (the last request plus the window). `held_since` is the first such read, for the time
 *   to a decision. Both null for an attempt that was never held.
 */
export class LateEffectWindow1764103600000 implements MigrationInterface {
  name = 'LateEffectWindow1764103600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "command_attempts" ADD "last_sent_at" timestamptz,
         ADD "held_since" timestamptz, ADD "held_until" timestamptz`,
    );
    await queryRunner.query(
      `CREATE INDEX "command_attempts_held_idx" ON "command_attempts" ("held_until", "id")
        WHERE "state" = 'started' AND "held_until" IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "command_attempts_held_idx"`);
    await queryRunner.query(
      `ALTER TABLE "command_attempts" DROP COLUMN "last_sent_at", DROP COLUMN "held_since",
         DROP COLUMN "held_until"`,
    );
  }
}
