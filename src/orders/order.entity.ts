import { Entity, PrimaryColumn } from 'typeorm';
import { col } from '../database/columns.js';

/** An ERP order, known by the ERP's order id (the Kafka key of its events). */
@Entity({ name: 'orders' })
export class OrderEntity {
  @PrimaryColumn({ name: 'order_id', type: 'text' })
  orderId!: string;

  @col.text('organization_id', { nullable: true }) organizationId!: string | null;
  @col.text('order_number', { nullable: true }) orderNumber!: string | null;

  /** open, cancelled, blocked (an earlier event is dead-lettered: later ones follow it). */
  @col.text('state', { default: 'open' }) state!: string;

  @col.currency({ nullable: true }) currency!: string | null;

  /** Set while an earlier event of this order is dead-lettered; cleared by a replay. */
  @col.timestamp('blocked_at', { nullable: true }) blockedAt!: Date | null;

  @col.text('blocked_reason', { nullable: true }) blockedReason!: string | null;
  @col.createdAt() createdAt!: Date;
  @col.updatedAt() updatedAt!: Date;
}
