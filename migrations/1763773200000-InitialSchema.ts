import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Orders, their Payflow payment and its installments. */
export class InitialSchema1763773200000 implements MigrationInterface {
  name = 'InitialSchema1763773200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "orders" (
        "order_id" text PRIMARY KEY,
        "organization_id" text,
        "order_number" text,
        "state" text NOT NULL DEFAULT 'open',
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE "payments" (
        "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        "order_id" text NOT NULL,
        "organization_id" text,
        "payflow_id" text,
        "state" text NOT NULL,
        "provider_status" text,
        "status" text,
        "currency" char(3) NOT NULL,
        "total_gross_minor" bigint NOT NULL,
        "total_net_minor" bigint NOT NULL,
        "payment_link" text,
        "webhook_token" text NOT NULL,
        "api_key_hash" bytea NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "payments_order_id_key" ON "payments" ("order_id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "payments_payflow_id_key" ON "payments" ("payflow_id")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "payments_webhook_token_key" ON "payments" ("webhook_token")`,
    );
    await queryRunner.query(`
      CREATE TABLE "installments" (
        "id" uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        "payment_id" uuid NOT NULL,
        "installment_ref" text,
        "payflow_installment_id" text,
        "position" int NOT NULL,
        "due_date" date NOT NULL,
        "gross_minor" bigint NOT NULL,
        "type" text,
        "provider_status" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "installments_payment_ref_key" ON "installments" ("payment_id", "installment_ref")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "installments_payflow_id_key" ON "installments" ("payflow_installment_id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "installments"`);
    await queryRunner.query(`DROP TABLE "payments"`);
    await queryRunner.query(`DROP TABLE "orders"`);
  }
}
