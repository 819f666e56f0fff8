import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `operator_actions`: what a person did by hand in the operator console (replay, verdict,
 * pull, forget, revealing a customer's contact data), who, when, on which order, with
 * details that name no personal data. Shown on the order's timeline; an audit trail, so
 * rows are only ever inserted.
 *
 * And what the order's timeline reads by index rather than by scan: an order's Payflow
 * calls (`command_attempts_order_idx`), the webhooks of its payments
 * (`webhook_inbox_payment_idx`, which `order show` reads too) and the messages written for
 * it, status events keyed by the order id and settlement lines keyed by its Payflow payment
 * id (`outbox_key_idx`).
 */
export class OperatorActions1764061200000 implements MigrationInterface {
  name = 'OperatorActions1764061200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "operator_actions" (
        "id" bigserial PRIMARY KEY,
        "actor" text NOT NULL,
        "action" text NOT NULL,
        "order_id" text,
        "details" jsonb NOT NULL DEFAULT '{}',
        "outcome" text NOT NULL,
        "performed_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX "operator_actions_order_idx" ON "operator_actions" ("order_id", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "command_attempts_order_idx" ON "command_attempts" ("order_id", "started_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_inbox_payment_idx" ON "webhook_inbox" ("payment_id", "received_at")`,
    );
    // Hash, not B-tree: a dead letter's copy keeps the ERP's Kafka key, which may be far longer
    // than a B-tree index row may be (2,704 bytes); the timeline only looks keys up by equality.
    await queryRunner.query(`CREATE INDEX "outbox_key_idx" ON "outbox" USING hash ("key")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "outbox_key_idx"`);
    await queryRunner.query(`DROP INDEX "webhook_inbox_payment_idx"`);
    await queryRunner.query(`DROP INDEX "command_attempts_order_idx"`);
    await queryRunner.query(`DROP TABLE "operator_actions"`);
  }
}
