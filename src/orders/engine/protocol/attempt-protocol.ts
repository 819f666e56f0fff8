/**
 * The exactly-once protocol of the order engine: how an order event's Payflow call, which is
 * not idempotent, takes effect once. Everything else in the engine carries it out.
 *
 * - begin: the call is recorded before it is made, as one `command_attempts` row per event,
 *   `started` and owned by one worker for a lease that outlasts the call's deadline.
 * - sent: just before the request leaves, its owner commits `sent_at`, and only while its
 *   lease runs; a request whose mark fails never leaves. An attempt not `sent` cannot have
 *   reached Payflow. A fresh event of a command that creates a payment makes its call
 *   first and takes both steps at once in the call's send hook (`begin_sent`: the rate gate
 *   passed, a connection held), so its request leaves one commit after it is ready.
 * - call, complete: Payflow's answer is recorded `succeeded`, with the event processed, the
 *   state changes and the status events, in one transaction. A call that had no effect is
 *   `failed`, and the next delivery takes the attempt over and sends it again.
 * - takeover: an attempt is its owner's while its lease runs (others are busy). Once the
 *   lease ran out, anyone may take over an attempt that was never sent; a sent one is sent
 *   again only when its call is repeatable, else Payflow's own state is read (a probe) and
 *   decides; without a probe it is in doubt.
 * - late effects: Payflow may apply a request some time after it arrived (a slow handler, a
 *   gateway that gave up while the service behind it still commits). So a read of Payflow
 *   that shows a call "not applied" is trusted only once PAYFLOW_LATE_EFFECT_WINDOW has
 *   passed since the call's latest request left (`last_sent_at`). Until then the attempt is
 *   `held`: nobody sends it again (nor fails or restarts it: the statements refuse a held one),
 *   its lease is released so that any worker's later read
 *   decides (its own retry, or a replacement after a crash: the window is counted from the
 *   recorded send mark, not from memory), the order's later events wait behind it, and a
 *   read that finds the call applied completes it at once.
 * - in doubt: the request may have taken effect, and nothing the engine can read tells. It
 *   is never sent again; the order waits until a person or a webhook settles it (`resolved`,
 *   or `failed` when it did not take effect, which sends it again).
 * - memory: an outcome this worker knows but could not commit is kept in memory
 *   (pending-outcomes.ts) and committed by the redelivery without calling again (`resume`).
 * - a unit may run twice: begin and complete are TransactionBatcher units, which the batcher
 *   may run a second time (its SAVEPOINT retry). So a unit keeps no effect outside the
 *   database: it returns, rather than throws, a decision that wrote nothing, logs nothing,
 *   and the memory changes only once its batch committed.
 *
 * TRANSITIONS is the whole table (drawn in docs/operations.md, "The exactly-once protocol");
 * each transition's condition is the WHERE of the statement that makes it (../attempts/,
 * the only owner of `command_attempts`' SQL), and test/orders/attempt-protocol-oracle.test.ts
 * runs those statements against attempts in every state and compares with `transition()`.
 * The guard decision (attempt-decision.ts), the meaning of a failed call
 * (payflow-failure.ts) and the steps in attempt-steps.ts choose which transition comes next.
 */
import type { RecordedAttempt, RetryReason } from './attempt-decision.js';

/**
 * An attempt's state: the row's `state`, with `sent` for a started one whose request left
 * and `held` for a sent one waiting out the late-effect window (`held_until`).
 */
export type AttemptState =
  | 'none'
  | 'started'
  | 'sent'
  | 'held'
  | 'succeeded'
  | 'failed'
  | 'in_doubt'
  | 'resolved'
  | 'discarded';

export const ATTEMPT_STATES: readonly AttemptState[] = [
  'none',
  'started',
  'sent',
  'held',
  'succeeded',
  'failed',
  'in_doubt',
  'resolved',
  'discarded',
];

/** What a transition's condition reads of the attempt. */
export interface AttemptView {
  readonly state: AttemptState;
  readonly owner: string | null;
  readonly leaseExpired: boolean;
  /** Its request left (`sent_at`): Payflow may have it. Always so for `sent` and `held`. */
  readonly sent: boolean;
  /** Its latest request left at least PAYFLOW_LATE_EFFECT_WINDOW ago: it can no longer land. */
  readonly windowPassed: boolean;
}

/** The guard row's attempt as the table sees it; undefined for a state this code does not know. */
export function viewOf(attempt: RecordedAttempt | null): AttemptView | undefined {
  if (attempt === null) {
    return { state: 'none', owner: null, leaseExpired: false, sent: false, windowPassed: false };
  }
  const known = ATTEMPT_STATES.find(
    (state) => state === attempt.state && state !== 'sent' && state !== 'held',
  );
  if (known === undefined) return undefined;
  let state: AttemptState = known;
  if (known === 'started' && attempt.sent) state = attempt.held ? 'held' : 'sent';
  return {
    state,
    owner: attempt.owner,
    leaseExpired: attempt.leaseExpired,
    sent: attempt.sent,
    windowPassed: attempt.windowPassed,
  };
}

export type TransitionName =
  | 'begin'
  | 'begin_sent'
  | 'mark_sent'
  | 'complete'
  | 'complete_late'
  | 'fail'
  | 'retry_failed'
  | 'restart_own'
  | 'take_over_unsent'
  | 'take_over_sent'
  | 'take_over_probed'
  | 'fail_probed'
  | 'hold'
  | 'in_doubt'
  | 'in_doubt_probed_own'
  | 'in_doubt_probed_expired'
  | 'complete_probed_own'
  | 'complete_probed_expired'
  | 'resolve'
  | 'not_taken'
  | 'discard';

export interface Transition {
  readonly from: readonly AttemptState[];
  readonly to: AttemptState;
  /** Who makes it and when, in words. */
  readonly who: string;
  /** The CommandAttemptRepository statement that makes it. */
  readonly statement: string;
  /** Its condition beyond `from` (the statement's WHERE), for `worker`. */
  readonly may: (attempt: AttemptView, worker: string) => boolean;
}

const anyone = (): boolean => true;
const owner = (attempt: AttemptView, worker: string): boolean => attempt.owner === worker;
const leaseRunOut = (attempt: AttemptView): boolean => attempt.leaseExpired;
/** Its request can no longer land: it never left, or its latest left the window ago. */
const cannotLand = (attempt: AttemptView): boolean => !attempt.sent || attempt.windowPassed;
const LIVE: readonly AttemptState[] = ['started', 'sent'];
/** A sent attempt a read of Payflow may decide: a stopped worker's, or one held. */
const READABLE: readonly AttemptState[] = ['sent', 'held'];
/**
 * Where a move that settles an attempt without sending it again may start: a live one, or
 * one held (in doubt or complete, it is never sent again, so its window need not end).
 */
const OPEN: readonly AttemptState[] = [...LIVE, 'held'];

/**
 * Every move of an attempt. Any other move is refused. A `held` attempt is never sent
 * again before its late-effect window ends: no move that begins a new call of it (`fail`,
 * `fail_probed` and `restart_own`, after which the next delivery sends it; `take_over_sent`)
 * starts from `held`; only `take_over_probed`, a read made once the window ended, sends it
 * again. The moves that settle it without a new call (`complete`, `complete_probed_*`,
 * `in_doubt*`, `resolve`) start from `held` like from a live attempt.
 */
export const TRANSITIONS: Readonly<Record<TransitionName, Transition>> = {
  begin: {
    from: ['none'],
    to: 'started',
    who: 'any worker, for a fresh event',
    statement: 'guard, guardMany, takeOver',
    may: anyone,
  },
  begin_sent: {
    from: ['none'],
    to: 'sent',
    who: 'any worker, for a fresh event whose request is about to leave (its send hook)',
    statement: 'beginSent',
    may: anyone,
  },
  mark_sent: {
    from: LIVE,
    to: 'sent',
    who: 'its owner, while the lease runs, just before the request leaves',
    statement: 'markSent',
    may: (attempt, worker) => owner(attempt, worker) && !attempt.leaseExpired,
  },
  complete: {
    from: OPEN,
    to: 'succeeded',
    who: 'the worker whose call Payflow answered (the deadline ends inside the lease)',
    statement: 'finish',
    may: anyone,
  },
  complete_late: {
    from: ['in_doubt'],
    to: 'resolved',
    who: 'a worker whose answer arrived after the attempt was marked in doubt',
    statement: 'finish',
    may: anyone,
  },
  fail: {
    from: LIVE,
    to: 'failed',
    who: 'its owner, when the call had no effect',
    statement: 'markFailed',
    may: owner,
  },
  fail_probed: {
    from: ['sent'],
    to: 'failed',
    who: 'its owner, whose probe after its own unclear call found it not applied, once the late-effect window ran out',
    statement: 'failProbed',
    may: (attempt, worker) => owner(attempt, worker) && attempt.windowPassed,
  },
  retry_failed: {
    from: ['failed'],
    to: 'started',
    who: 'any worker, on the next delivery',
    statement: 'takeOver',
    may: anyone,
  },
  restart_own: {
    from: LIVE,
    to: 'started',
    who: 'its owner, which remembers that its call had no effect',
    statement: 'takeOver',
    may: owner,
  },
  take_over_unsent: {
    from: ['started'],
    to: 'started',
    who: 'any worker, once the lease ran out: the request never left',
    statement: 'takeOver',
    may: leaseRunOut,
  },
  take_over_sent: {
    from: ['sent'],
    to: 'started',
    who: 'any worker, once the lease ran out, for a repeatable call',
    statement: 'takeOverProbed',
    may: leaseRunOut,
  },
  take_over_probed: {
    from: READABLE,
    to: 'started',
    who: 'any worker, once the lease ran out, whose probe found it not applied once the late-effect window ran out',
    statement: 'takeOverProbed (probed)',
    may: (attempt) => attempt.leaseExpired && attempt.windowPassed,
  },
  hold: {
    from: READABLE,
    to: 'held',
    who: 'its owner after its own unclear call, or any worker once the lease ran out, whose probe found it not applied while the late-effect window runs',
    statement: 'holdForLateEffect',
    may: (attempt, worker) =>
      !attempt.windowPassed && (owner(attempt, worker) || attempt.leaseExpired),
  },
  in_doubt: {
    from: OPEN,
    to: 'in_doubt',
    who: 'the worker that found it may have taken effect, without a probe (a held one: a delivery whose mapping failed, which cannot read Payflow)',
    statement: 'markInDoubt',
    may: anyone,
  },
  in_doubt_probed_own: {
    from: OPEN,
    to: 'in_doubt',
    who: 'its owner, whose probe after its own unclear call could not tell (held meanwhile by a read of another worker, once its lease ran out)',
    statement: 'markInDoubt (hold own)',
    may: owner,
  },
  in_doubt_probed_expired: {
    from: READABLE,
    to: 'in_doubt',
    who: 'any worker, once the lease ran out, whose probe could not tell',
    statement: 'markInDoubt (hold expired)',
    may: leaseRunOut,
  },
  complete_probed_own: {
    from: OPEN,
    to: 'succeeded',
    who: 'its owner, whose probe after its own unclear call found it took effect (held meanwhile by a read of another worker, once its lease ran out)',
    statement: 'claimProbed (hold own), finish',
    may: owner,
  },
  complete_probed_expired: {
    from: READABLE,
    to: 'succeeded',
    who: 'any worker, once the lease ran out, whose probe found it took effect',
    statement: 'claimProbed (hold expired), finish',
    may: leaseRunOut,
  },
  resolve: {
    from: [...OPEN, 'in_doubt'],
    to: 'resolved',
    who: "a person, or a webhook naming the payment's creation",
    statement: 'resolveForPayment',
    may: anyone,
  },
  not_taken: {
    from: ['in_doubt'],
    to: 'failed',
    who: 'a person who found it never took effect (in-doubt resolve --not-created), once its request can no longer land (never sent, or the late-effect window ran out)',
    statement: 'markNotTaken',
    may: cannotLand,
  },
  discard: {
    from: ['none', 'failed', 'discarded'],
    to: 'discarded',
    who: 'a person (dlq discard) or a superseding ERP event, for an event dead-lettered without effect: it never takes effect, whatever delivers it again; idempotent (discarded again stays discarded)',
    statement: 'discard',
    may: anyone,
  },
};

/** Where `name` takes the attempt, for `worker`; null when the protocol refuses it. */
export function transition(
  name: TransitionName,
  attempt: AttemptView,
  worker: string,
): AttemptState | null {
  const move = TRANSITIONS[name];
  if (!move.from.includes(attempt.state) || !move.may(attempt, worker)) return null;
  return move.to;
}

/** The transition by which the guard decision `retry` takes the attempt over. */
export function retryTransition(reason: RetryReason): TransitionName {
  switch (reason) {
    case 'failed':
      return 'retry_failed';
    case 'no_effect':
      return 'restart_own';
    case 'unsent':
      return 'take_over_unsent';
    case 'race':
      return 'begin';
  }
}
