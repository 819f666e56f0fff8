import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { minorUnitsTransformer } from '../database/minor-units.transformer.js';

/**
 * A Payflow payment of an order, with what payflow-bridge last knew of its state. An order
 * may have several over time; commands act on the latest.
 */
@Entity({ name: 'payments' })
@Index('payments_order_id_idx', ['orderId', 'createdAt'])
export class PaymentEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'order_id', type: 'text' })
  orderId!: string;

  /** The order.payment_requested event that created it. */
  @Index('payments_event_id_key', { unique: true })
  @Column({ name: 'event_id', type: 'uuid', nullable: true })
  eventId!: string | null;

  @Column({ name: 'payment_method_id', type: 'text', nullable: true })
  paymentMethodId!: string | null;

  @Column({ name: 'last_polled_at', type: 'timestamptz', nullable: true })
  lastPolledAt!: Date | null;

  /**
   * When the status snapshot now held was fetched from Payflow; a snapshot fetched earlier
   * is never applied over it (webhooks and polls race).
   */
  @Column({ name: 'status_checked_at', type: 'timestamptz', nullable: true })
  statusCheckedAt!: Date | null;

  @Column({ name: 'organization_id', type: 'text', nullable: true })
  organizationId!: string | null;

  @Index('payments_payflow_id_key', { unique: true })
  @Column({ name: 'payflow_id', type: 'text', nullable: true })
  payflowId!: string | null;

  /** creating, created, in_doubt, creation_failed, cancelled. */
  @Column({ type: 'text' })
  state!: string;

  /** Payflow's raw paymentStatus, kept as received. */
  @Column({ name: 'provider_status', type: 'text', nullable: true })
  providerStatus!: string | null;

  /** pending, paid, failed, cancelled, unknown. */
  @Column({ type: 'text', nullable: true })
  status!: string | null;

  @Column({ type: 'char', length: 3 })
  currency!: string;

  @Column({ name: 'total_gross_minor', type: 'bigint', transformer: minorUnitsTransformer })
  totalGrossMinor!: number;

  @Column({ name: 'total_net_minor', type: 'bigint', transformer: minorUnitsTransformer })
  totalNetMinor!: number;

  @Column({ name: 'payment_link', type: 'text', nullable: true })
  paymentLink!: string | null;

  /** Path token of this payment's webhook URLs; unguessable, bound to this payment. */
  @Index('payments_webhook_token_key', { unique: true })
  @Column({ name: 'webhook_token', type: 'text' })
  webhookToken!: string;

  /** SHA-256 of the per-payment api_key; the key itself is never stored. */
  @Column({ name: 'api_key_hash', type: 'bytea' })
  apiKeyHash!: Buffer;

  /** W3C trace headers of the creation, continued by the payment's webhooks. */
  @Column({ name: 'trace_headers', type: 'jsonb', nullable: true })
  traceHeaders!: { traceparent: string; tracestate?: string } | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
