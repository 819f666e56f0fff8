import { Entity, Index, PrimaryColumn } from 'typeorm';
import { col } from '../database/columns.js';

/** An order event that took effect. Its id makes a redelivery do nothing. */
@Entity({ name: 'processed_events' })
@Index('processed_events_order_idx', ['orderId', 'processedAt'])
export class ProcessedEventEntity {
  @PrimaryColumn({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @col.text('order_id') orderId!: string;
  @col.text() type!: string;
  @col.text() topic!: string;
  @col.int() partition!: number;
  @col.bigint() offset!: string;
  @col.now('processed_at') processedAt!: Date;
  /** When the worker took the event up (its delivery to the handler); null before it was kept. */
  @col.timestamp('read_at', { nullable: true }) readAt!: Date | null;
}
