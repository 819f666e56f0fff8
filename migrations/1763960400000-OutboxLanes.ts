import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox relay publishes each topic of a bucket as a lane of its own (status events
 * are never queued behind a night of settlement events): it finds a bucket's pending
 * topics by a loose index scan and takes each topic's oldest rows. The pending index
 * therefore leads with (bucket, topic); it replaces (bucket, id), which every query that
 * used it can still use by its first column.
 */
export class OutboxLanes1763960400000 implements MigrationInterface {
  name = 'OutboxLanes1763960400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "outbox_pending_lane_idx" ON "outbox" ("bucket", "topic", "id") WHERE "published_at" IS NULL`,
    );
    await queryRunner.query(`DROP INDEX "outbox_pending_idx"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "outbox_pending_idx" ON "outbox" ("bucket", "id") WHERE "published_at" IS NULL`,
    );
    await queryRunner.query(`DROP INDEX "outbox_pending_lane_idx"`);
  }
}
