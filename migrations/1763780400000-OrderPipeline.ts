import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The order pipeline's state: processed event ids (a redelivered event does nothing),
 * command attempts (a non-idempotent Payflow call is recorded before it is made, so that a
 * crash leaves it visibly in doubt), the transactional outbox (bucketed by key so that
 * several relays keep per-key order), dead letters, documents, refunds and status history.
 * An order may have several payments over time; commands act on the latest one.
 */
export class OrderPipeline1763780400000 implements MigrationInterface {
  name = 'OrderPipeline1763780400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "orders" ADD "blocked_at" timestamptz`);
    await queryRunner.query(`ALTER TABLE "orders" ADD "blocked_reason" text`);
    await queryRunner.query(`ALTER TABLE "orders" ADD "currency" char(3)`);

    await queryRunner.query(`DROP INDEX "payments_order_id_key"`);
    await queryRunner.query(
      `CREATE INDEX "payments_order_id_idx" ON "payments" ("order_id", "created_at")`,
    );
    await queryRunner.query(`ALTER TABLE "payments" ADD "event_id" uuid`);
    await queryRunner.query(`ALTER TABLE "payments" ADD "payment_method_id" text`);
    await queryRunner.query(`ALTER TABLE "payments" ADD "last_polled_at" timestamptz`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "payments_event_id_key" ON "payments" ("event_id")`,
    );
    await queryRunner.query(`ALTER TABLE "installments" ADD "removed_at" timestamptz`);

    await queryRunner.query(`
      CREATE TABLE "processed_events" (
        "event_id" uuid PRIMARY KEY,
        "order_id" text NOT NULL,
        "type" text NOT NULL,
        "topic" text NOT NULL,
        "partition" int NOT NULL,
        "offset" bigint NOT NULL,
        "processed_at" timestamptz NOT NULL DEFAULT now()
      )`);

    await queryRunner.query(`
      CREATE TABLE "command_attempts" (
        "id" bigserial PRIMARY KEY,
        "event_id" uuid NOT NULL,
        "order_id" text NOT NULL,
        "command" text NOT NULL,
        "state" text NOT NULL,
        "owner" text NOT NULL,
        "lease_until" timestamptz NOT NULL,
        "payment_id" uuid,
        "error_code" text,
        "started_at" timestamptz NOT NULL DEFAULT now(),
        "finished_at" timestamptz
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "command_attempts_event_id_key" ON "command_attempts" ("event_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "command_attempts_open_idx" ON "command_attempts" ("lease_until") WHERE "state" = 'started'`,
    );

    await queryRunner.query(`
      CREATE TABLE "outbox" (
        "id" bigserial PRIMARY KEY,
        "bucket" smallint NOT NULL,
        "topic" text NOT NULL,
        "key" text,
        "value" bytea NOT NULL,
        "headers" jsonb NOT NULL DEFAULT '{}',
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "published_at" timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX "outbox_pending_idx" ON "outbox" ("bucket", "id") WHERE "published_at" IS NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE "dead_letters" (
        "id" bigserial PRIMARY KEY,
        "order_id" text,
        "event_id" text,
        "event_type" text,
        "reason" text NOT NULL,
        "error" text NOT NULL,
        "topic" text NOT NULL,
        "partition" int NOT NULL,
        "offset" bigint NOT NULL,
        "key" bytea,
        "value" bytea,
        "headers" jsonb NOT NULL DEFAULT '{}',
        "attempts" int NOT NULL,
        "failed_at" timestamptz NOT NULL DEFAULT now(),
        "replayed_at" timestamptz
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "dead_letters_origin_key" ON "dead_letters" ("topic", "partition", "offset")`,
    );
    await queryRunner.query(
      `CREATE INDEX "dead_letters_order_idx" ON "dead_letters" ("order_id", "id")`,
    );

    await queryRunner.query(`
      CREATE TABLE "documents" (
        "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        "payment_id" uuid NOT NULL,
        "document_ref" text NOT NULL,
        "payflow_document_id" text,
        "file_name" text NOT NULL,
        "content_type" text NOT NULL,
        "size" int NOT NULL,
        "removed_at" timestamptz,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "documents_payment_ref_key" ON "documents" ("payment_id", "document_ref")`,
    );

    await queryRunner.query(`
      CREATE TABLE "refunds" (
        "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        "payment_id" uuid NOT NULL,
        "refund_ref" text NOT NULL,
        "payflow_refund_id" text,
        "currency" char(3) NOT NULL,
        "gross_minor" bigint NOT NULL,
        "net_minor" bigint NOT NULL,
        "refund_type" text,
        "remaining_minor" bigint,
        "created_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "refunds_payment_ref_key" ON "refunds" ("payment_id", "refund_ref")`,
    );

    await queryRunner.query(`
      CREATE TABLE "payment_status_history" (
        "id" bigserial PRIMARY KEY,
        "payment_id" uuid NOT NULL,
        "provider_status" text,
        "previous_provider_status" text,
        "status" text,
        "source" text NOT NULL,
        "event_id" uuid,
        "recorded_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX "payment_status_history_payment_idx" ON "payment_status_history" ("payment_id", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'payment_status_history',
      'refunds',
      'documents',
      'dead_letters',
      'outbox',
      'command_attempts',
      'processed_events',
    ]) {
      await queryRunner.query(`DROP TABLE "${table}"`);
    }
    await queryRunner.query(`ALTER TABLE "installments" DROP COLUMN "removed_at"`);
    await queryRunner.query(`DROP INDEX "payments_event_id_key"`);
    await queryRunner.query(`ALTER TABLE "payments" DROP COLUMN "last_polled_at"`);
    await queryRunner.query(`ALTER TABLE "payments" DROP COLUMN "payment_method_id"`);
    await queryRunner.query(`ALTER TABLE "payments" DROP COLUMN "event_id"`);
    await queryRunner.query(`DROP INDEX "payments_order_id_idx"`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "payments_order_id_key" ON "payments" ("order_id")`,
    );
    await queryRunner.query(`ALTER TABLE "orders" DROP COLUMN "currency"`);
    await queryRunner.query(`ALTER TABLE "orders" DROP COLUMN "blocked_reason"`);
    await queryRunner.query(`ALTER TABLE "orders" DROP COLUMN "blocked_at"`);
  }
}
