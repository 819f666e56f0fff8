import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the operator console (issue 22) finds, by index lookups rather than scans at a
 * million orders:
 * - `orders.customer_number`: the ERP customer number of the order's payment request (null
 *   for orders created before it was kept, and for orders without one), found by
 *   `orders_customer_number_idx` (newest first within a customer); order numbers by
 *   `orders_order_number_idx`; Payflow payment ids already by `payments_payflow_id_key`.
 * - the last orders that failed: blocked orders (an event dead-lettered) by
 *   `orders_blocked_idx`, payments whose creation failed or is in doubt by
 *   `payments_failed_idx`, calls in doubt by `command_attempts_in_doubt_idx` (also what
 *   `in-doubt list` and the overview's count read);
 * - an order's last event (and the timeline's events) by `processed_events_order_idx`;
 * - dead letters by time (the dead-letter page, the overview's last 24 h) by
 *   `dead_letters_failed_at_idx`.
 * Partial indexes stay small: they hold only the rows that failed.
 */
export class ConsoleSearch1764057600000 implements MigrationInterface {
  name = 'ConsoleSearch1764057600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "orders" ADD "customer_number" text`);
    await queryRunner.query(`CREATE INDEX "orders_order_number_idx" ON "orders" ("order_number")`);
    await queryRunner.query(
      `CREATE INDEX "orders_customer_number_idx" ON "orders" ("customer_number", "created_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "orders_blocked_idx" ON "orders" ("blocked_at") WHERE "blocked_at" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX "payments_failed_idx" ON "payments" ("updated_at") WHERE "state" IN ('creation_failed', 'in_doubt')`,
    );
    await queryRunner.query(
      `CREATE INDEX "command_attempts_in_doubt_idx" ON "command_attempts" ("finished_at", "id") WHERE "state" = 'in_doubt'`,
    );
    await queryRunner.query(
      `CREATE INDEX "processed_events_order_idx" ON "processed_events" ("order_id", "processed_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "dead_letters_failed_at_idx" ON "dead_letters" ("failed_at", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const index of [
      'dead_letters_failed_at_idx',
      'processed_events_order_idx',
      'command_attempts_in_doubt_idx',
      'payments_failed_idx',
      'orders_blocked_idx',
      'orders_customer_number_idx',
      'orders_order_number_idx',
    ]) {
      await queryRunner.query(`DROP INDEX "${index}"`);
    }
    await queryRunner.query(`ALTER TABLE "orders" DROP COLUMN "customer_number"`);
  }
}
