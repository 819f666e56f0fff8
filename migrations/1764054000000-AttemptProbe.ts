import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `command_attempts.probe_*`: what the runner read at Payflow before calling a follow-up in
 * doubt (its worker stopped after the request left, or the call failed in a way that may
 * have taken effect). `probe_outcome` is `took_effect`, `not_applied` or `unreadable`;
 * `probe_evidence` says what was read and what it showed (`{ read, shown }`, no personal
 * data); `probed_at` when. Null for an attempt that was never probed.
 */
export class AttemptProbe1764054000000 implements MigrationInterface {
  name = 'AttemptProbe1764054000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "command_attempts" ADD "probe_outcome" text, ADD "probe_evidence" jsonb,
         ADD "probed_at" timestamptz`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "command_attempts" DROP COLUMN "probe_outcome", DROP COLUMN "probe_evidence",
         DROP COLUMN "probed_at"`,
    );
  }
}
