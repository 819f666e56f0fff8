import { Column, Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/**
 * One erasure of personal data that changed something (`privacy erase`, or the daily
 * retention job): who, when, what it covered and how many rows of each store it changed.
 * Only ever inserted. It names no personal data: a customer number is kept as its SHA-256.
 */
@Entity({ name: 'privacy_erasures' })
@Index('privacy_erasures_subject_idx', ['scope', 'subject', 'id'])
export class PrivacyErasureEntity {
  @col.bigintId() id!: string;

  /** The person (`--by`, else the OS user), or `retention`. */
  @col.text('erased_by') erasedBy!: string;

  /** operator or retention. */
  @col.text() trigger!: string;

  /** order, customer_number or retention. */
  @col.text() scope!: string;

  /** The order id, `sha256:<hex>` of the customer number, or the retention's cut-off. */
  @col.text() subject!: string;

  /** The orders it covered. */
  @Column({ name: 'order_ids', type: 'jsonb', default: () => `'[]'` })
  orderIds!: string[];

  /** Rows changed per store (deadLetters, outbox, webhooks, …). */
  @Column({ name: 'counts', type: 'jsonb', default: () => `'{}'` })
  counts!: Record<string, number>;

  /** Rows changed, all stores together. */
  @col.int() changed!: number;

  @col.now('erased_at') erasedAt!: Date;
}

export const PRIVACY_ENTITIES = [PrivacyErasureEntity];
