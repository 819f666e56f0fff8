import { Column, Entity, Index } from 'typeorm';
import { col } from '../../database/columns.js';

/**
 * What a person did by hand in the operator console: replay, verdict, pull, forget, or
 * revealing a customer's contact data. Only ever inserted (an audit trail); the order's
 * timeline shows the rows of its order. `details` names no personal data.
 */
@Entity({ name: 'operator_actions' })
@Index('operator_actions_order_idx', ['orderId', 'id'])
export class OperatorActionEntity {
  @col.bigintId() id!: string;

  /** Who: the name the person gave at sign-in. */
  @col.text() actor!: string;

  /** What: replay, verdict, pull, forget, reveal_contact… */
  @col.text() action!: string;

  /** The order it concerned, when it concerned one. */
  @col.text('order_id', { nullable: true }) orderId!: string | null;

  @Column({ name: 'details', type: 'jsonb', default: () => `'{}'` })
  details!: Record<string, unknown>;

  /** done, refused or failed. */
  @col.text() outcome!: string;

  @col.now('performed_at') performedAt!: Date;
}

export const OPERATOR_ACTION_ENTITIES = [OperatorActionEntity];
