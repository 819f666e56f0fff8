import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A Kafka message written in the same transaction as the state change that caused it,
 * published later by the relay. `bucket` is a hash of the key: one relay at a time owns a
 * bucket, so messages of one key leave in the order they were written. Each topic of a
 * bucket is a lane of its own (the pending index leads with bucket and topic).
 */
@Entity({ name: 'outbox' })
@Index('outbox_pending_lane_idx', ['bucket', 'topic', 'id'], { where: `"published_at" IS NULL` })
@Index('outbox_published_idx', ['publishedAt'], { where: `"published_at" IS NOT NULL` })
export class OutboxEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ type: 'smallint' })
  bucket!: number;

  @Column({ type: 'text' })
  topic!: string;

  @Column({ type: 'text', nullable: true })
  key!: string | null;

  @Column({ type: 'bytea' })
  value!: Buffer;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  headers!: Record<string, string>;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;
}
