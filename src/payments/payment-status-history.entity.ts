import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** Every status payflow-bridge saw for a payment, and where it learned it. */
@Entity({ name: 'payment_status_history' })
@Index('payment_status_history_payment_idx', ['paymentId', 'id'])
export class PaymentStatusHistoryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'payment_id', type: 'uuid' })
  paymentId!: string;

  @Column({ name: 'provider_status', type: 'text', nullable: true })
  providerStatus!: string | null;

  @Column({ name: 'previous_provider_status', type: 'text', nullable: true })
  previousProviderStatus!: string | null;

  @Column({ type: 'text', nullable: true })
  status!: string | null;

  /** create, webhook, poll, command. */
  @Column({ type: 'text' })
  source!: string;

  @Column({ name: 'event_id', type: 'uuid', nullable: true })
  eventId!: string | null;

  @Column({ name: 'recorded_at', type: 'timestamptz', default: () => 'now()' })
  recordedAt!: Date;
}
