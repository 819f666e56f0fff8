import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The payment's own references (issue 29): `paymentRef` and `externalRef` of
 * order.payment_requested, as sent to Payflow, kept on the payment so that reconciliation
 * and the operator's reads can show them. Null when the ERP sent none (and for every payment
 * created before this migration). Business references, not personal data
 * (docs/assumptions.md).
 */
export class PaymentReferences1764122400000 implements MigrationInterface {
  name = 'PaymentReferences1764122400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "payments" ADD "payment_ref" text, ADD "external_ref" text`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "payments" DROP COLUMN "external_ref", DROP COLUMN "payment_ref"`,
    );
  }
}
