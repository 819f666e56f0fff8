import { Column, Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/**
 * A Payflow call made for an order event, recorded before the call. A row still `started`
 * after its lease ran out belongs to a worker that died: if it was sent (`sent_at`), the
 * call may or may not have taken effect at Payflow, so it is never re-sent blindly (state
 * `in_doubt`); if not, the next delivery takes it over.
 */
@Entity({ name: 'command_attempts' })
@Index('command_attempts_open_idx', ['leaseUntil'], { where: `"state" = 'started'` })
@Index('command_attempts_in_doubt_idx', ['finishedAt', 'id'], { where: `"state" = 'in_doubt'` })
@Index('command_attempts_order_idx', ['orderId', 'startedAt'])
@Index('command_attempts_held_idx', ['heldUntil', 'id'], {
  where: `"state" = 'started' AND "held_until" IS NOT NULL`,
})
export class CommandAttemptEntity {
  @col.bigintId() id!: string;

  @Index('command_attempts_event_id_key', { unique: true })
  @col.uuid('event_id')
  eventId!: string;

  @col.text('order_id') orderId!: string;

  /** The event type whose command this is. */
  @col.text() command!: string;

  /** started, succeeded, failed, in_doubt, resolved. */
  @col.text() state!: string;

  /** Instance id of the worker that made the call. */
  @col.text() owner!: string;

  @col.timestamp('lease_until') leaseUntil!: Date;
  @col.uuid('payment_id', { nullable: true }) paymentId!: string | null;
  @col.text('error_code', { nullable: true }) errorCode!: string | null;
  @col.now('started_at') startedAt!: Date;
  @col.timestamp('finished_at', { nullable: true }) finishedAt!: Date | null;

  /**
   * Set just before the request leaves (after the 429 gate and a connection slot): only an
   * attempt with it may have reached Payflow, so only such an attempt can be in doubt.
   */
  @col.timestamp('sent_at', { nullable: true }) sentAt!: Date | null;

  /**
   * When the latest request left (a call that sends again, e.g. after a 401 refresh, marks
   * each request): the late-effect window counts from it. Null on older rows (`sent_at`).
   */
  @col.timestamp('last_sent_at', { nullable: true }) lastSentAt!: Date | null;

  /**
   * A read of Payflow found the call not applied while its request could still land
   * (PAYFLOW_LATE_EFFECT_WINDOW): held, with no second call, from `held_since` (the first
   * such read) until `held_until` (the last request plus the window).
   */
  @col.timestamp('held_since', { nullable: true }) heldSince!: Date | null;
  @col.timestamp('held_until', { nullable: true }) heldUntil!: Date | null;

  /**
   * What reading Payflow decided about a follow-up that would have been in doubt:
   * took_effect, not_applied or unreadable (null: never probed).
   */
  @col.text('probe_outcome', { nullable: true }) probeOutcome!: string | null;

  /** What was read and what it showed: `{ read, shown }`. */
  @Column({ name: 'probe_evidence', type: 'jsonb', nullable: true })
  probeEvidence!: { readonly read: string; readonly shown: string } | null;

  @col.timestamp('probed_at', { nullable: true }) probedAt!: Date | null;
}
