import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A Payflow call made for an order event, recorded before the call. A row still `started`
 * after its lease ran out belongs to a worker that died: if it was sent (`sent_at`), the
 * call may or may not have taken effect at Payflow, so it is never re-sent blindly (state
 * `in_doubt`); if not, the next delivery takes it over.
 */
@Entity({ name: 'command_attempts' })
@Index('command_attempts_open_idx', ['leaseUntil'], { where: `"state" = 'started'` })
export class CommandAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Index('command_attempts_event_id_key', { unique: true })
  @Column({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @Column({ name: 'order_id', type: 'text' })
  orderId!: string;

  /** The event type whose command this is. */
  @Column({ type: 'text' })
  command!: string;

  /** started, succeeded, failed, in_doubt, resolved. */
  @Column({ type: 'text' })
  state!: string;

  /** Instance id of the worker that made the call. */
  @Column({ type: 'text' })
  owner!: string;

  @Column({ name: 'lease_until', type: 'timestamptz' })
  leaseUntil!: Date;

  @Column({ name: 'payment_id', type: 'uuid', nullable: true })
  paymentId!: string | null;

  @Column({ name: 'error_code', type: 'text', nullable: true })
  errorCode!: string | null;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt!: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;

  /**
   * Set just before the request leaves (after the 429 gate and a connection slot): only an
   * attempt with it may have reached Payflow, so only such an attempt can be in doubt.
   */
  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true })
  sentAt!: Date | null;
}
