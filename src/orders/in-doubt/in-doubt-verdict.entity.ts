import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A person's verdict on a Payflow call in doubt (`in-doubt resolve`): the payment they
 * found at Payflow (`payment_found`) or `not_created`. The order's history shows it; the
 * command reads it to stay idempotent. Who decided comes from `--by` or the OS user name.
 */
@Entity({ name: 'in_doubt_verdicts' })
@Index('in_doubt_verdicts_order_idx', ['orderId', 'id'])
export class InDoubtVerdictEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'order_id', type: 'text' })
  orderId!: string;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  /** The command_attempts row the verdict settled. */
  @Column({ name: 'attempt_id', type: 'bigint' })
  attemptId!: string;

  /** The event type whose call was in doubt. */
  @Column({ type: 'text' })
  command!: string;

  /** payment_found or not_created. */
  @Column({ type: 'text' })
  verdict!: string;

  @Column({ name: 'payflow_id', type: 'text', nullable: true })
  payflowId!: string | null;

  /** The bridge's payment the call was about (payments.id), when it had one. */
  @Column({ name: 'payment_id', type: 'uuid', nullable: true })
  paymentId!: string | null;

  @Column({ name: 'decided_by', type: 'text' })
  decidedBy!: string;

  @Column({ name: 'decided_at', type: 'timestamptz', default: () => 'now()' })
  decidedAt!: Date;

  /** When the order's parked events were republished after the verdict. */
  @Column({ name: 'replayed_at', type: 'timestamptz', nullable: true })
  replayedAt!: Date | null;

  @Column({ name: 'replayed_letters', type: 'int', nullable: true })
  replayedLetters!: number | null;
}
