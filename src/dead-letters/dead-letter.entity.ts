import { Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/**
 * An order event that could not take effect, kept with its original key and value so that
 * an operator can see it (`order show`) and replay it (`dlq replay`), or discard it (`dlq
 * discard`, a superseding event). The same message is published to the dead-letter topic
 * through the outbox.
 */
@Entity({ name: 'dead_letters' })
@Index('dead_letters_origin_key', ['topic', 'partition', 'offset'], { unique: true })
@Index('dead_letters_order_idx', ['orderId', 'id'])
@Index('dead_letters_failed_at_idx', ['failedAt', 'id'])
@Index('dead_letters_event_idx', ['eventId'])
export class DeadLetterEntity {
  @col.bigintId() id!: string;
  @col.text('order_id', { nullable: true }) orderId!: string | null;
  @col.text('event_id', { nullable: true }) eventId!: string | null;
  @col.text('event_type', { nullable: true }) eventType!: string | null;
  @col.text() reason!: string;
  @col.text() error!: string;
  @col.text() topic!: string;
  @col.int() partition!: number;
  @col.bigint() offset!: string;
  @col.bytes('key', { nullable: true }) key!: Buffer | null;
  @col.bytes('value', { nullable: true }) value!: Buffer | null;

  @col.headers() headers!: Record<string, string>;

  @col.int() attempts!: number;
  @col.now('failed_at') failedAt!: Date;
  @col.timestamp('replayed_at', { nullable: true }) replayedAt!: Date | null;

  /** Set when it will never take effect (`dlq discard`, or an event that supersedes it). */
  @col.timestamp('discarded_at', { nullable: true }) discardedAt!: Date | null;
  @col.text('discarded_by', { nullable: true }) discardedBy!: string | null;
  @col.text('discard_reason', { nullable: true }) discardReason!: string | null;
  /** The eventId of the ERP event that took its place, for a supersede. */
  @col.text('superseded_by', { nullable: true }) supersededBy!: string | null;

  /** Set when its personal data was erased (`privacy erase`, retention): never replayed. */
  @col.timestamp('erased_at', { nullable: true }) erasedAt!: Date | null;
}
