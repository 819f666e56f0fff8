import { Column, Entity, Index } from 'typeorm';
import { col } from '../../database/columns.js';

/**
 * What a person did by hand in the operator console: replay, verdict, pull, forget, or
 * revealing a customer's contact data; signing in and out, failed sign-ins and refused
 * actions. Only ever inserted (an audit trail); the order's timeline shows the rows of its
 * order. `details` names no personal data.
 */
@Entity({ name: 'operator_actions' })
@Index('operator_actions_order_idx', ['orderId', 'id'])
export class OperatorActionEntity {
  @col.bigintId() id!: string;

  /**
   * Who: the provider's display name (OpenID sign-in), or the name the person typed at the
   * token sign-in (then `actorVerified` is false).
   */
  @col.text() actor!: string;

  /** The OpenID provider's subject (`sub`); null for the token sign-in. */
  @col.text('actor_subject', { nullable: true }) actorSubject!: string | null;

  /** Whether the provider vouched for who it was (false: a name typed at the token sign-in). */
  @Column({ name: 'actor_verified', type: 'boolean', default: false })
  actorVerified!: boolean;

  /** The client address the request came from. */
  @col.text('client_address', { nullable: true }) clientAddress!: string | null;

  /** What: replay, verdict, pull, forget, reveal_contact, erase_personal_data, view_dead_letter… */
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
