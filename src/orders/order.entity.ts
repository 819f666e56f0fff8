import { Entity, Index, PrimaryColumn } from 'typeorm';
import { col } from '../database/columns.js';

/** An ERP order, known by the ERP's order id (the Kafka key of its events). */
@Entity({ name: 'orders' })
@Index('orders_order_number_idx', ['orderNumber'])
@Index('orders_customer_number_idx', ['customerNumber', 'createdAt'])
@Index('orders_blocked_idx', ['blockedAt'], { where: `"blocked_at" IS NOT NULL` })
export class OrderEntity {
  @PrimaryColumn({ name: 'order_id', type: 'text' })
  orderId!: string;

  @col.text('organization_id', { nullable: true }) organizationId!: string | null;
  @col.text('order_number', { nullable: true }) orderNumber!: string | null;

  /** The ERP customer number of its payment request (what support is asked about). */
  @col.text('customer_number', { nullable: true }) customerNumber!: string | null;

  /** open, cancelled, blocked (an earlier event is dead-lettered: later ones follow it). */
  @col.text('state', { default: 'open' }) state!: string;

  @col.currency({ nullable: true }) currency!: string | null;

  /** Set while an earlier event of this order is dead-lettered; cleared by a replay. */
  @col.timestamp('blocked_at', { nullable: true }) blockedAt!: Date | null;

  @col.text('blocked_reason', { nullable: true }) blockedReason!: string | null;

  /** When its personal data was last erased (`privacy erase`, RETENTION_PERSONAL_DATA). */
  @col.timestamp('personal_data_erased_at', { nullable: true })
  personalDataErasedAt!: Date | null;
  @col.createdAt() createdAt!: Date;
  @col.updatedAt() updatedAt!: Date;
}
