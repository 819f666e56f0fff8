import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * An order event that could not take effect, kept with its original key and value so that
 * an operator can see it (`order show`) and replay it (`dlq replay`). The same message is
 * published to the dead-letter topic through the outbox.
 */
@Entity({ name: 'dead_letters' })
@Index('dead_letters_origin_key', ['topic', 'partition', 'offset'], { unique: true })
@Index('dead_letters_order_idx', ['orderId', 'id'])
export class DeadLetterEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'order_id', type: 'text', nullable: true })
  orderId!: string | null;

  @Column({ name: 'event_id', type: 'text', nullable: true })
  eventId!: string | null;

  @Column({ name: 'event_type', type: 'text', nullable: true })
  eventType!: string | null;

  @Column({ type: 'text' })
  reason!: string;

  @Column({ type: 'text' })
  error!: string;

  @Column({ type: 'text' })
  topic!: string;

  @Column({ type: 'int' })
  partition!: number;

  @Column({ type: 'bigint' })
  offset!: string;

  @Column({ type: 'bytea', nullable: true })
  key!: Buffer | null;

  @Column({ type: 'bytea', nullable: true })
  value!: Buffer | null;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  headers!: Record<string, string>;

  @Column({ type: 'int' })
  attempts!: number;

  @Column({ name: 'failed_at', type: 'timestamptz', default: () => 'now()' })
  failedAt!: Date;

  @Column({ name: 'replayed_at', type: 'timestamptz', nullable: true })
  replayedAt!: Date | null;
}
