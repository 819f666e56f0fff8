import { Column, Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/**
 * A Payflow payment of an order, with what payflow-bridge last knew of its state. An order
 * may have several over time; commands act on the latest.
 */
@Entity({ name: 'payments' })
@Index('payments_order_id_idx', ['orderId', 'createdAt'])
@Index('payments_failed_idx', ['updatedAt'], {
  where: `"state" IN ('creation_failed', 'in_doubt')`,
})
export class PaymentEntity {
  @col.uuidId() id!: string;
  @col.text('order_id') orderId!: string;

  /** The order.payment_requested event that created it. */
  @Index('payments_event_id_key', { unique: true })
  @col.uuid('event_id', { nullable: true })
  eventId!: string | null;

  @col.text('payment_method_id', { nullable: true }) paymentMethodId!: string | null;

  /** The ERP's `paymentRef` / `externalRef` as sent to Payflow; null when none was sent. */
  @col.text('payment_ref', { nullable: true }) paymentRef!: string | null;
  @col.text('external_ref', { nullable: true }) externalRef!: string | null;
  @col.timestamp('last_polled_at', { nullable: true }) lastPolledAt!: Date | null;

  /**
   * When the status snapshot now held was fetched from Payflow; a snapshot fetched earlier
   * is never applied over it (webhooks and polls race).
   */
  @col.timestamp('status_checked_at', { nullable: true }) statusCheckedAt!: Date | null;

  @col.text('organization_id', { nullable: true }) organizationId!: string | null;

  @Index('payments_payflow_id_key', { unique: true })
  @col.text('payflow_id', { nullable: true })
  payflowId!: string | null;

  /** creating, created, in_doubt, creation_failed, cancelled. */
  @col.text() state!: string;

  /** Payflow's raw paymentStatus, kept as received. */
  @col.text('provider_status', { nullable: true }) providerStatus!: string | null;

  /** pending, paid, failed, cancelled, unknown. */
  @col.text('status', { nullable: true }) status!: string | null;

  @col.currency() currency!: string;
  @col.minorUnits('total_gross_minor') totalGrossMinor!: number;
  @col.minorUnits('total_net_minor') totalNetMinor!: number;
  @col.text('payment_link', { nullable: true }) paymentLink!: string | null;

  /** Path token of this payment's webhook URLs; unguessable, bound to this payment. */
  @Index('payments_webhook_token_key', { unique: true })
  @col.text('webhook_token')
  webhookToken!: string;

  /** SHA-256 of the per-payment api_key; the key itself is never stored. */
  @col.bytes('api_key_hash') apiKeyHash!: Buffer;

  /** W3C trace headers of the creation, continued by the payment's webhooks. */
  @Column({ name: 'trace_headers', type: 'jsonb', nullable: true })
  traceHeaders!: { traceparent: string; tracestate?: string } | null;

  @col.createdAt() createdAt!: Date;
  @col.updatedAt() updatedAt!: Date;
}
