import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An order event that took effect. Its id makes a redelivery do nothing. */
@Entity({ name: 'processed_events' })
export class ProcessedEventEntity {
  @PrimaryColumn({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @Column({ name: 'order_id', type: 'text' })
  orderId!: string;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'text' })
  topic!: string;

  @Column({ type: 'int' })
  partition!: number;

  @Column({ type: 'bigint' })
  offset!: string;

  @Column({ name: 'processed_at', type: 'timestamptz', default: () => 'now()' })
  processedAt!: Date;
}
