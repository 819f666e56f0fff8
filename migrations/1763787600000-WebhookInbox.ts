import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook inbox: every authenticated webhook is stored (raw body, redacted headers)
 * before Payflow gets its 2xx, deduplicated by a key kept longer than Payflow's 5.4-day
 * retry span, and processed later against Payflow's authoritative payment status.
 * `payments.status_checked_at` orders status snapshots: a snapshot fetched earlier than the
 * one already applied is never applied over it.
 */
export class WebhookInbox1763787600000 implements MigrationInterface {
  name = 'WebhookInbox1763787600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "webhook_inbox" (
        "id" bigserial PRIMARY KEY,
        "payment_id" uuid NOT NULL,
        "kind" text NOT NULL,
        "dedupe_key" text NOT NULL,
        "body" bytea NOT NULL,
        "headers" jsonb NOT NULL DEFAULT '{}',
        "verdict" text NOT NULL,
        "duplicates" int NOT NULL DEFAULT 0,
        "received_at" timestamptz NOT NULL DEFAULT now(),
        "last_received_at" timestamptz NOT NULL DEFAULT now(),
        "attempts" int NOT NULL DEFAULT 0,
        "next_attempt_at" timestamptz NOT NULL DEFAULT now(),
        "last_error" text,
        "processed_at" timestamptz
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "webhook_inbox_dedupe_key" ON "webhook_inbox" ("dedupe_key")`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_inbox_pending_idx" ON "webhook_inbox" ("next_attempt_at", "id") WHERE "processed_at" IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "webhook_inbox_received_idx" ON "webhook_inbox" ("received_at")`,
    );
    await queryRunner.query(`ALTER TABLE "payments" ADD "status_checked_at" timestamptz`);
    await queryRunner.query(
      `CREATE INDEX "outbox_published_idx" ON "outbox" ("published_at") WHERE "published_at" IS NOT NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "outbox_published_idx"`);
    await queryRunner.query(`ALTER TABLE "payments" DROP COLUMN "status_checked_at"`);
    await queryRunner.query(`DROP TABLE "webhook_inbox"`);
  }
}
