import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `payments.trace_headers`: the W3C `traceparent` / `tracestate` of the order event that
 * created the payment (CONTRACT §8), so that its webhooks, which come hours later and to
 * any replica, continue that trace. Null for payments made before tracing.
 */
export class PaymentTraceHeaders1764050400000 implements MigrationInterface {
  name = 'PaymentTraceHeaders1764050400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "payments" ADD "trace_headers" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "payments" DROP COLUMN "trace_headers"`);
  }
}
