import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `command_attempts.sent_at`: when the attempt's request was about to leave the process
 * (after the client's 429 gate and a connection slot). An attempt whose worker died is in
 * doubt only if it has one; an attempt recorded but never sent (it waited behind the gate)
 * is taken over and sent by the next delivery.
 */
export class CommandAttemptSentAt1763866800000 implements MigrationInterface {
  name = 'CommandAttemptSentAt1763866800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "command_attempts" ADD "sent_at" timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "command_attempts" DROP COLUMN "sent_at"`);
  }
}
