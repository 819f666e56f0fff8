import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who did what in the console, as far as the bridge can tell (issue 27, part 2):
 *
 * - `operator_actions.actor_subject`: the OpenID provider's subject (`sub`) of the person,
 *   null for the shared-token sign-in;
 * - `operator_actions.actor_verified`: true when the provider vouched for the person; false
 *   when the name was only typed at the token sign-in (every row written before this
 *   migration was such a sign-in);
 * - `operator_actions.client_address`: the address the request came from.
 *
 * Failed sign-ins and refused actions are rows too (outcome `refused`).
 *
 * `processed_events.read_at`: when the worker took the event up (its delivery to the
 * handler), so that an order's timeline shows an ERP event before the Payflow call and the
 * status events it caused, not when its processing ended. Null for rows written before.
 */
export class ConsoleIdentity1764118800000 implements MigrationInterface {
  name = 'ConsoleIdentity1764118800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "operator_actions" ADD "actor_subject" text,
         ADD "actor_verified" boolean NOT NULL DEFAULT false, ADD "client_address" text`,
    );
    await queryRunner.query(`ALTER TABLE "processed_events" ADD "read_at" timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "processed_events" DROP COLUMN "read_at"`);
    await queryRunner.query(
      `ALTER TABLE "operator_actions" DROP COLUMN "actor_subject", DROP COLUMN "actor_verified",
         DROP COLUMN "client_address"`,
    );
  }
}
