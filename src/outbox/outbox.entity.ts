import { Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/**
 * A Kafka message written in the same transaction as the state change that caused it,
 * published later by the relay. `bucket` is a hash of the key: one relay at a time owns a
 * bucket, so messages of one key leave in the order they were written. Each topic of a
 * bucket is a lane of its own (the pending index leads with bucket and topic).
 */
@Entity({ name: 'outbox' })
@Index('outbox_pending_lane_idx', ['bucket', 'topic', 'id'], { where: `"published_at" IS NULL` })
@Index('outbox_published_idx', ['publishedAt'], { where: `"published_at" IS NOT NULL` })
// A hash index (created by the migration; TypeORM cannot declare one, so it leaves it alone):
// a dead letter's copy keeps the ERP's Kafka key, which may be longer than a B-tree row allows.
@Index('outbox_key_idx', { synchronize: false })
export class OutboxEntity {
  @col.bigintId() id!: string;
  @col.smallint() bucket!: number;
  @col.text() topic!: string;
  @col.text('key', { nullable: true }) key!: string | null;
  @col.bytes() value!: Buffer;
  @col.headers() headers!: Record<string, string>;
  @col.now('created_at') createdAt!: Date;
  @col.timestamp('published_at', { nullable: true }) publishedAt!: Date | null;
}
