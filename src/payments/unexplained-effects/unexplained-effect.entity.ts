import { Entity, Index } from 'typeorm';
import { col } from '../../database/columns.js';

/**
 * An installment or document that Payflow holds for one of our payments and that no event
 * of the order explains (issue 26 §1): the bridge has no row for it, and no live attempt
 * could be about to record it. Most likely a follow-up call that Payflow applied after the
 * bridge had sent it again. Recorded once per (payment, kind, Payflow id), the first read
 * that found it and the last one that still did; the bridge deletes nothing at Payflow.
 */
@Entity({ name: 'unexplained_effects' })
@Index('unexplained_effects_payment_kind_payflow_id_key', ['paymentId', 'kind', 'payflowId'], {
  unique: true,
})
@Index('unexplained_effects_order_idx', ['orderId', 'id'])
export class UnexplainedEffectEntity {
  @col.bigintId() id!: string;
  @col.text('order_id') orderId!: string;
  /** payments.id */
  @col.uuid('payment_id') paymentId!: string;
  /** installment or document. */
  @col.text() kind!: string;
  /** Payflow's id of the installment or document. */
  @col.text('payflow_id') payflowId!: string;
  /** An installment's date and amount as Payflow last showed them. */
  @col.date('due_date', { nullable: true }) dueDate!: string | null;
  @col.minorUnits('gross_minor', { nullable: true }) grossMinor!: number | null;
  @col.currency({ nullable: true }) currency!: string | null;
  /** An installment's status at Payflow when last seen (CANCELLED once removed by hand). */
  @col.text('provider_status', { nullable: true }) providerStatus!: string | null;
  /** A document's file name, where Payflow shows one (never logged). */
  @col.text('file_name', { nullable: true }) fileName!: string | null;
  @col.now('first_seen_at') firstSeenAt!: Date;
  /** The read that found it: webhook, reconcile or probe. */
  @col.text('first_seen_by') firstSeenBy!: string;
  @col.now('last_seen_at') lastSeenAt!: Date;
}

export const UNEXPLAINED_EFFECT_ENTITIES = [UnexplainedEffectEntity];
