import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Personal data (CONTRACT §10, docs/privacy.md): `privacy erase` and the daily retention
 * job remove the personal data the bridge holds for orders, keeping ids, amounts, states and
 * the order of events.
 *
 * - `privacy_erasures`: the record of every erasure that changed something: who (a person,
 *   or `retention`), when, what it covered (an order id, a customer number as its SHA-256,
 *   or the retention's cut-off), the orders and how many rows of each store it changed.
 *   It names no personal data itself.
 * - `dead_letters.erased_at`: the letter's copy of the event was scrubbed; a replay refuses it.
 * - `orders.personal_data_erased_at`: when the order's personal data was last erased; the
 *   retention job takes an order again only when something touched it since.
 */
export class PrivacyErasures1764110800000 implements MigrationInterface {
  name = 'PrivacyErasures1764110800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "privacy_erasures" (
        "id" bigserial PRIMARY KEY,
        "erased_by" text NOT NULL,
        "trigger" text NOT NULL,
        "scope" text NOT NULL,
        "subject" text NOT NULL,
        "order_ids" jsonb NOT NULL DEFAULT '[]',
        "counts" jsonb NOT NULL DEFAULT '{}',
        "changed" int NOT NULL,
        "erased_at" timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX "privacy_erasures_subject_idx" ON "privacy_erasures" ("scope", "subject", "id")`,
    );
    await queryRunner.query(`ALTER TABLE "dead_letters" ADD "erased_at" timestamptz`);
    await queryRunner.query(`ALTER TABLE "orders" ADD "personal_data_erased_at" timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "orders" DROP COLUMN "personal_data_erased_at"`);
    await queryRunner.query(`ALTER TABLE "dead_letters" DROP COLUMN "erased_at"`);
    await queryRunner.query(`DROP TABLE "privacy_erasures"`);
  }
}
