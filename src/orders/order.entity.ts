import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** An ERP order, known by the ERP's order id (the Kafka key of its events). */
@Entity({ name: 'orders' })
export class OrderEntity {
  @PrimaryColumn({ name: 'order_id', type: 'text' })
  orderId!: string;

  @Column({ name: 'organization_id', type: 'text', nullable: true })
  organizationId!: string | null;

  @Column({ name: 'order_number', type: 'text', nullable: true })
  orderNumber!: string | null;

  /** open, cancelled, blocked (an earlier event is dead-lettered: later ones follow it). */
  @Column({ type: 'text', default: 'open' })
  state!: string;

  @Column({ type: 'char', length: 3, nullable: true })
  currency!: string | null;

  /** Set while an earlier event of this order is dead-lettered; cleared by a replay. */
  @Column({ name: 'blocked_at', type: 'timestamptz', nullable: true })
  blockedAt!: Date | null;

  @Column({ name: 'blocked_reason', type: 'text', nullable: true })
  blockedReason!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
