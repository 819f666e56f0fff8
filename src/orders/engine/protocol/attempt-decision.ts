/**
 * What to do with an order event, decided from its guard row alone: the attempt ledger's
 * view of the event (processed? order blocked? an attempt, whose, sent, lease run out?)
 * and what this worker remembers of it (pending-outcomes.ts). Part of the exactly-once
 * protocol (attempt-protocol.ts): it chooses the transition that begins the event's call.
 * Pure, so that every branch is tested without a database (attempt-decision.spec.ts);
 * attempt-begin.ts carries it out.
 */

/** An attempt recorded for the event (command_attempts). */
export interface RecordedAttempt {
  readonly id: string;
  /** started, succeeded, failed, in_doubt, resolved or discarded (anything else is refused). */
  readonly state: string;
  readonly owner: string | null;
  /** Its lease ran out (its worker is presumed stopped). */
  readonly leaseExpired: boolean;
  /** Its request left (`sent_at`), so Payflow may have applied it. */
  readonly sent: boolean;
  readonly paymentId: string | null;
  /**
   * A read of Payflow found it not applied while its request could still land: held for
   * the late-effect window (its lease released, so that any worker's next read decides).
   */
  readonly held: boolean;
  /** When it was first held (null: never), for the time to a decision. */
  readonly heldSince: Date | null;
  /** Its latest request left at least PAYFLOW_LATE_EFFECT_WINDOW ago. */
  readonly windowPassed: boolean;
}

/** The guard statement's answer about one event. */
export interface GuardRow {
  /** The attempt the guard statement itself recorded (a fresh event), else null. */
  readonly startedAttemptId: string | null;
  readonly processed: boolean;
  readonly blocked: boolean;
  readonly blockedReason: string | null;
  readonly attempt: RecordedAttempt | null;
}

/**
 * What this worker holds in memory about the event's started attempt: an outcome it could
 * not record (Payflow did it; the COMMIT failed), or a call that had no effect.
 */
export type PendingOutcome = 'outcome' | 'no_effect';

export interface DecisionInput {
  readonly guard: GuardRow;
  readonly workerId: string;
  readonly pending: PendingOutcome | null;
  /** The event's mapping failed (before the guard). */
  readonly mappingFailed: boolean;
}

/** Why an event is sent again (or, `race`, sent although another delivery recorded it first). */
export type RetryReason =
  /** An earlier attempt failed without effect. */
  | 'failed'
  /** This worker's own call had no effect, but recording that failed. */
  | 'no_effect'
  /** A stopped worker's attempt whose request never left: taken over. */
  | 'unsent'
  /** No attempt was visible, yet the guard recorded none: another delivery is racing. */
  | 'race';

export type Decision =
  /** Fresh: the guard recorded this worker's attempt. Call Payflow. */
  | { readonly kind: 'new'; readonly attemptId: string }
  /** It took effect already: nothing to do. */
  | { readonly kind: 'duplicate' }
  /** An earlier event of the order was dead-lettered. */
  | { readonly kind: 'blocked'; readonly reason: string | null }
  /** Another worker is calling Payflow for it, within its lease (transient). */
  | { readonly kind: 'busy'; readonly owner: string | null }
  /** An earlier attempt is in doubt: never sent again. */
  | { readonly kind: 'in_doubt' }
  /** Its worker stopped after the request left: the attempt becomes in doubt now. */
  | { readonly kind: 'lease_expired'; readonly attemptId: string }
  /** This worker knows the outcome: record it without calling Payflow again. */
  | { readonly kind: 'resume' }
  /** Take the attempt over and call Payflow. */
  | { readonly kind: 'retry'; readonly reason: RetryReason }
  /** It would be sent, but its mapping failed: record that instead. */
  | { readonly kind: 'mapping_failed' }
  /** The ledger holds a state this code does not know. */
  | { readonly kind: 'unknown_state'; readonly state: string };

export function decide(input: DecisionInput): Decision {
  const { guard } = input;
  if (guard.startedAttemptId !== null) return { kind: 'new', attemptId: guard.startedAttemptId };
  if (guard.processed) return { kind: 'duplicate' };
  if (guard.blocked) return { kind: 'blocked', reason: guard.blockedReason };
  const attempt = guard.attempt;
  let reason: RetryReason;
  if (attempt === null) {
    reason = 'race';
  } else {
    switch (attempt.state) {
      case 'failed':
        reason = 'failed';
        break;
      // Discarded (dlq discard, or superseded): it never takes effect, even when Kafka
      // delivers it again (its offset was not committed yet); nothing to do, as for done.
      case 'succeeded':
      case 'resolved':
      case 'discarded':
        return { kind: 'duplicate' };
      case 'in_doubt':
        return { kind: 'in_doubt' };
      case 'started': {
        const pending = attempt.owner === input.workerId ? input.pending : null;
        if (pending === 'outcome') return { kind: 'resume' };
        // A held attempt is not restarted from memory (restart_own refuses it: a read held
        // it for the late-effect window): like any held one, a read of Payflow decides.
        if (pending === 'no_effect' && !attempt.held) {
          reason = 'no_effect';
          break;
        }
        if (attempt.leaseExpired && !attempt.sent) {
          reason = 'unsent';
          break;
        }
        // A stopped worker's sent attempt, or one held for a late effect (its lease released):
        // Payflow's own state decides.
        if (attempt.leaseExpired) return { kind: 'lease_expired', attemptId: attempt.id };
        return { kind: 'busy', owner: attempt.owner };
      }
      default:
        return { kind: 'unknown_state', state: attempt.state };
    }
  }
  if (input.mappingFailed) return { kind: 'mapping_failed' };
  return { kind: 'retry', reason };
}
