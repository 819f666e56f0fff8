import { Entity, Index } from 'typeorm';
import { col } from '../../database/columns.js';

/**
 * A person's verdict on a Payflow call in doubt (`in-doubt resolve`): the payment they
 * found at Payflow (`payment_found`) or `not_created`. The order's history shows it; the
 * command reads it to stay idempotent. Who decided comes from `--by` or the OS user name.
 */
@Entity({ name: 'in_doubt_verdicts' })
@Index('in_doubt_verdicts_order_idx', ['orderId', 'id'])
export class InDoubtVerdictEntity {
  @col.bigintId() id!: string;
  @col.text('order_id') orderId!: string;
  @col.uuid('event_id') eventId!: string;

  /** The command_attempts row the verdict settled. */
  @col.bigint('attempt_id') attemptId!: string;

  /** The event type whose call was in doubt. */
  @col.text() command!: string;

  /** payment_found or not_created. */
  @col.text() verdict!: string;

  @col.text('payflow_id', { nullable: true }) payflowId!: string | null;

  /** The bridge's payment the call was about (payments.id), when it had one. */
  @col.uuid('payment_id', { nullable: true }) paymentId!: string | null;

  @col.text('decided_by') decidedBy!: string;
  @col.now('decided_at') decidedAt!: Date;

  /** When the order's parked events were republished after the verdict. */
  @col.timestamp('replayed_at', { nullable: true }) replayedAt!: Date | null;

  @col.int('replayed_letters', { nullable: true }) replayedLetters!: number | null;
}
