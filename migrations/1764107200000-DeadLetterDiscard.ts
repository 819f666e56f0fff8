import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A dead letter that will never take effect (CONTRACT §10: `dlq discard`, the console's
 * discard, an ERP event that `supersedes` it) is kept, marked discarded, rather than
 * deleted: who (`discarded_by`), when (`discarded_at`), why (`discard_reason`) and, for a
 * supersede, the event that took its place (`superseded_by`). A replay never takes a
 * discarded letter again.
 *
 * `dead_letters_event_idx`: a discard and a supersede find an event's letters by its id.
 */
export class DeadLetterDiscard1764107200000 implements MigrationInterface {
  name = 'DeadLetterDiscard1764107200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "dead_letters" ADD "discarded_at" timestamptz, ADD "discarded_by" text,
         ADD "discard_reason" text, ADD "superseded_by" text`,
    );
    await queryRunner.query(`CREATE INDEX "dead_letters_event_idx" ON "dead_letters" ("event_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "dead_letters_event_idx"`);
    await queryRunner.query(
      `ALTER TABLE "dead_letters" DROP COLUMN "discarded_at", DROP COLUMN "discarded_by",
         DROP COLUMN "discard_reason", DROP COLUMN "superseded_by"`,
    );
  }
}
