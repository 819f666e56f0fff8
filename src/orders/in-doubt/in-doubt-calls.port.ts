/**
 * What `in-doubt resolve` reads before it decides: the order's call in doubt and the attempt
 * settled without a verdict. The read side implements it (src/operator/in-doubt,
 * InDoubtListQuery, which composes the tables' repositories); the write side here only
 * names what it needs, so src/orders never imports src/operator.
 */
import type { Sql } from '../../database/database.js';
import type { ProbeEvidence } from '../engine/attempts/command-attempt.repository.js';

/** The order event whose Payflow call creates the payment. */
export const PAYMENT_CREATION = 'order.payment_requested';

/**
 * A webhook stored for the payment, as the read side lists it: when, which kind, processed
 * or not; never its body or headers. Named here, so src/orders imports nothing from
 * src/webhooks: the inbox's rows (webhook-inbox.repository.ts, ReceivedWebhook) fit it.
 */
export interface InDoubtWebhook {
  readonly paymentId: string;
  readonly id: string;
  readonly kind: string;
  readonly receivedAt: Date;
  readonly lastReceivedAt: Date;
  readonly duplicates: number;
  readonly attempts: number;
  readonly processedAt: Date | null;
  readonly lastError: string | null;
}

/** One call in doubt, as the tables hold it. */
export interface InDoubtRow {
  readonly attemptId: string;
  readonly eventId: string;
  readonly orderId: string;
  readonly command: string;
  readonly errorCode: string | null;
  readonly startedAt: Date;
  readonly sentAt: Date | null;
  readonly inDoubtSince: Date | null;
  readonly paymentId: string | null;
  readonly organizationId: string | null;
  readonly payflowId: string | null;
  readonly paymentState: string | null;
  /** char(3), as stored. */
  readonly currency: string | null;
  /** Minor units as decimal text. */
  readonly totalGross: string | null;
  /** The payment's live installments (0 without a payment). */
  readonly plannedInstallments: number;
  readonly blocked: boolean;
  /** The order's other dead letters waiting for a replay. */
  readonly parked: number;
  /** The value of the event's own latest dead letter. */
  readonly letterValue: Buffer | null;
  /**
   * The webhooks stored for the attempt's payment (Payflow names a payment by the webhook
   * token of its callback URL; the receiver stores them under the payment's id), oldest
   * first; never their body or headers.
   */
  readonly webhooks: readonly InDoubtWebhook[];
  /**
   * What reading Payflow found before the call was parked (a follow-up Payflow could not
   * be read for: `unreadable`), null when it was never probed (creations, refunds, …).
   */
  readonly probeOutcome: string | null;
  readonly probeEvidence: ProbeEvidence | null;
  readonly probedAt: Date | null;
  /**
   * A call held for a late effect (not in doubt yet): a read found it not applied while its
   * request may still land; nothing is sent again before this (null: not held).
   */
  readonly heldUntil: Date | null;
}

/** An attempt of the order settled without a verdict (by a webhook, or a run cut short). */
export interface ResolvedAttemptRow {
  readonly attemptId: string;
  readonly eventId: string;
  readonly command: string;
  readonly paymentId: string | null;
  readonly payflowId: string | null;
  readonly paymentState: string | null;
  readonly finishedAt: Date | null;
}

export interface InDoubtCalls {
  /** The order's calls in doubt, oldest first (normally one: the order is then blocked). */
  ofOrder(sql: Sql, orderId: string): Promise<InDoubtRow[]>;
  /** The order's latest attempt that ended `resolved` (settled from outside), if any. */
  lastResolved(sql: Sql, orderId: string): Promise<ResolvedAttemptRow | null>;
}
