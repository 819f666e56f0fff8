import { Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/** Every status payflow-bridge saw for a payment, and where it learned it. */
@Entity({ name: 'payment_status_history' })
@Index('payment_status_history_payment_idx', ['paymentId', 'id'])
export class PaymentStatusHistoryEntity {
  @col.bigintId() id!: string;
  @col.uuid('payment_id') paymentId!: string;
  @col.text('provider_status', { nullable: true }) providerStatus!: string | null;
  @col.text('previous_provider_status', { nullable: true }) previousProviderStatus!: string | null;
  @col.text('status', { nullable: true }) status!: string | null;

  /** create, webhook, poll, command. */
  @col.text() source!: string;

  @col.uuid('event_id', { nullable: true }) eventId!: string | null;
  @col.now('recorded_at') recordedAt!: Date;
}
