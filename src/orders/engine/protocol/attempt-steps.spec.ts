/**
 * The steps that choose the exactly-once protocol's next transition (attempt-steps.ts:
 * afterLeaseExpired, afterCallFailure, afterProbe) and the guard decision's choices
 * (attempt-decision.ts), each held to the table: every transition they name allows the
 * attempt it is taken on. The table itself: attempt-protocol.spec.ts.
 */
import { describe, expect, it } from '@jest/globals';
import {
  PayflowServerError,
  PayflowTimeoutError,
  PayflowValidationError,
  type PayflowReached,
} from '../../../payflow/payflow.errors.js';
import { decide, type GuardRow, type RecordedAttempt } from './attempt-decision.js';
import {
  retryTransition,
  transition,
  viewOf,
  type AttemptState,
  type AttemptView,
  type TransitionName,
} from './attempt-protocol.js';
import {
  LEASE_EXPIRED_CODE,
  afterCallFailure,
  afterLeaseExpired,
  afterProbe,
  type AfterProbe,
} from './attempt-steps.js';

const ME = 'worker-a';
const OTHER = 'worker-b';

/** An attempt in `state`, by default another worker's within its lease, sent when it says so. */
function at(state: AttemptState, overrides: Partial<AttemptView> = {}): AttemptView {
  return {
    state,
    owner: state === 'none' ? null : OTHER,
    leaseExpired: false,
    sent: state === 'sent' || state === 'held',
    windowPassed: false,
    ...overrides,
  };
}

const mine = (state: AttemptState): AttemptView => at(state, { owner: ME });
const expired = (state: AttemptState): AttemptView => at(state, { leaseExpired: true });
/** Its latest request left longer than the late-effect window ago. */
const lapsed = (view: AttemptView): AttemptView => ({ ...view, windowPassed: true });

/** The guard row's attempt, by default another worker's started one within its lease. */
function recorded(overrides: Partial<RecordedAttempt>): RecordedAttempt {
  return {
    id: '5',
    state: 'started',
    owner: OTHER,
    leaseExpired: false,
    sent: false,
    paymentId: null,
    held: false,
    heldSince: null,
    windowPassed: false,
    ...overrides,
  };
}

describe('the guard decision takes only transitions the table allows', () => {
  const guard = (attempt: RecordedAttempt | null): GuardRow => ({
    startedAttemptId: null,
    processed: false,
    blocked: false,
    blockedReason: null,
    attempt,
  });

  it.each([
    ['failed', recorded({ state: 'failed' }), null, 'retry_failed'],
    ['no_effect', recorded({ owner: ME, sent: true }), 'no_effect', 'restart_own'],
    ['unsent', recorded({ leaseExpired: true }), null, 'take_over_unsent'],
    ['race', null, null, 'begin'],
  ] as const)('retry (%s)', (reason, attempt, pending, expected) => {
    const decision = decide({ guard: guard(attempt), workerId: ME, pending, mappingFailed: false });
    expect(decision).toEqual({ kind: 'retry', reason });
    expect(retryTransition(reason)).toBe(expected);
    const view = viewOf(attempt);
    if (view === undefined) throw new Error('a known state');
    expect(transition(expected, view, ME)).toBe('started');
  });

  it('busy: the table lets no other worker take a live attempt over', () => {
    for (const sent of [false, true]) {
      const attempt = recorded({ sent });
      const decision = decide({
        guard: guard(attempt),
        workerId: ME,
        pending: null,
        mappingFailed: false,
      });
      expect(decision.kind).toBe('busy');
      const view = viewOf(attempt);
      if (view === undefined) throw new Error('a known state');
      for (const name of ['take_over_unsent', 'take_over_sent', 'restart_own'] as const) {
        expect(transition(name, view, ME)).toBeNull();
      }
    }
  });

  it('lease_expired: each way out of it is a transition the table allows', () => {
    const attempt = recorded({ sent: true, leaseExpired: true });
    const decision = decide({
      guard: guard(attempt),
      workerId: ME,
      pending: null,
      mappingFailed: false,
    });
    expect(decision).toEqual({ kind: 'lease_expired', attemptId: '5' });
    const view = viewOf(attempt);
    if (view === undefined) throw new Error('a known state');
    for (const name of [
      'take_over_sent',
      'in_doubt',
      'in_doubt_probed_expired',
      'complete_probed_expired',
    ] as const) {
      expect(transition(name, view, ME)).not.toBeNull();
    }
    expect(transition('take_over_unsent', view, ME)).toBeNull();
  });

  it('a held attempt is read again by any worker: its lease is released', () => {
    const attempt = recorded({ sent: true, leaseExpired: true, held: true, owner: ME });
    const decision = decide({
      guard: guard(attempt),
      workerId: ME,
      pending: null,
      mappingFailed: false,
    });
    expect(decision).toEqual({ kind: 'lease_expired', attemptId: '5' });
    const view = viewOf(attempt);
    if (view === undefined) throw new Error('a known state');
    expect(transition('hold', view, OTHER)).toBe('held');
    expect(transition('complete_probed_expired', view, OTHER)).toBe('succeeded');
    // Never sent again while its request may still land.
    expect(transition('take_over_probed', view, OTHER)).toBeNull();
    expect(transition('take_over_probed', lapsed(view), OTHER)).toBe('started');
  });

  it('a held attempt is read again even when this worker remembers a call without effect', () => {
    const attempt = recorded({ sent: true, leaseExpired: true, held: true, owner: ME });
    const decision = decide({
      guard: guard(attempt),
      workerId: ME,
      pending: 'no_effect',
      mappingFailed: false,
    });
    expect(decision).toEqual({ kind: 'lease_expired', attemptId: '5' });
    const view = viewOf(attempt);
    if (view === undefined) throw new Error('a known state');
    // restart_own would send it again before its window ends: the table refuses it.
    expect(transition('restart_own', view, ME)).toBeNull();
    expect(transition('restart_own', lapsed(view), ME)).toBeNull();
  });
});

const init = (reached: PayflowReached, status?: number) => ({
  endpoint: 'createPayment' as const,
  method: 'POST',
  reached,
  status,
});

describe('afterLeaseExpired', () => {
  it('sends a repeatable call again', () => {
    expect(afterLeaseExpired({ mapped: true, repeatable: true, probes: true })).toEqual({
      kind: 'send_again',
      transition: 'take_over_sent',
    });
  });

  it('probes a call that has a probe', () => {
    expect(afterLeaseExpired({ mapped: true, repeatable: false, probes: true })).toEqual({
      kind: 'probe',
    });
  });

  it('marks it in doubt otherwise, and when the mapping failed', () => {
    const inDoubt = {
      kind: 'in_doubt',
      transition: 'in_doubt',
      errorCode: LEASE_EXPIRED_CODE,
      cause: 'its worker stopped during the Payflow call (the attempt lease expired)',
    };
    expect(afterLeaseExpired({ mapped: true, repeatable: false, probes: false })).toEqual(inDoubt);
    expect(afterLeaseExpired({ mapped: false, repeatable: true, probes: true })).toEqual(inDoubt);
  });
});

describe('afterCallFailure', () => {
  const timeout = new PayflowTimeoutError(init('maybe'), 'headers');

  it('leaves the attempt started on an error that is not Payflow’s', () => {
    const bug = new TypeError('bug');
    expect(afterCallFailure(bug, { repeatable: false, probes: true })).toEqual({
      kind: 'leave_started',
      error: bug,
    });
  });

  it('fails a call without effect, and an unclear repeatable one', () => {
    const rejected = new PayflowValidationError(init('yes', 422), []);
    expect(afterCallFailure(rejected, { repeatable: false, probes: true })).toMatchObject({
      kind: 'fail',
      transition: 'fail',
      error: rejected,
    });
    expect(afterCallFailure(timeout, { repeatable: true, probes: false }).kind).toBe('fail');
  });

  it('probes an unclear call that has a probe', () => {
    expect(afterCallFailure(timeout, { repeatable: false, probes: true })).toEqual({
      kind: 'probe',
      error: timeout,
    });
  });

  it('marks an unclear call without a probe in doubt, with its own code', () => {
    const server = new PayflowServerError(init('yes', 500));
    const next = afterCallFailure(server, { repeatable: false, probes: false });
    expect(next).toMatchObject({
      kind: 'in_doubt',
      transition: 'in_doubt',
      errorCode: server.code,
    });
    if (next.kind !== 'in_doubt') throw new Error('expected in_doubt');
    expect(next.cause).toMatch(/^the Payflow call failed after it may have been applied \(/);
  });
});

describe('afterProbe', () => {
  const callError = new PayflowTimeoutError(init('maybe'), 'body');
  const own = { kind: 'own', callError } as const;
  const lapsedHold = { kind: 'expired' } as const;
  const evidence = { read: 'GET paymentStatus', shown: 'paymentStatus SENT' };

  it('took effect: completes, own or expired, with the result', () => {
    const found = { kind: 'took_effect', result: 42, evidence } as const;
    expect(afterProbe(own, found)).toEqual({
      kind: 'complete',
      transition: 'complete_probed_own',
      result: 42,
    });
    expect(afterProbe(lapsedHold, found)).toEqual({
      kind: 'complete',
      transition: 'complete_probed_expired',
      result: 42,
    });
  });

  it('not applied: held while the window runs; then an own attempt fails, an expired one is taken over', () => {
    const found = { kind: 'not_applied', evidence } as const;
    expect(afterProbe(own, found)).toEqual({
      kind: 'not_applied',
      afterWindow: 'fail_probed',
      withinWindow: 'hold',
      callError,
    });
    expect(afterProbe(lapsedHold, found)).toEqual({
      kind: 'not_applied',
      afterWindow: 'take_over_probed',
      withinWindow: 'hold',
      callError: undefined,
    });
  });

  it('unreadable or undecided: in doubt; losing an expired attempt meanwhile is busy', () => {
    const unreadable = { kind: 'unreadable', evidence } as const;
    const undecided = { kind: 'undecided', evidence } as const;
    expect(afterProbe(lapsedHold, unreadable)).toEqual({
      kind: 'in_doubt',
      transition: 'in_doubt_probed_expired',
      errorCode: LEASE_EXPIRED_CODE,
      cause:
        'its worker stopped during the Payflow call (the attempt lease expired), and Payflow could not be read (paymentStatus SENT)',
      callError: undefined,
      notMarked: 'busy',
    });
    const next = afterProbe(own, undecided);
    expect(next).toMatchObject({
      kind: 'in_doubt',
      transition: 'in_doubt_probed_own',
      errorCode: callError.code,
      callError,
      notMarked: 'in_doubt',
    });
    if (next.kind !== 'in_doubt') throw new Error('expected in_doubt');
    expect(next.cause).toMatch(/^the Payflow call failed after it may have been applied \(/);
    expect(next.cause).toMatch(/, and Payflow’s state does not tell \(paymentStatus SENT\)$/);
  });

  it('every step names a transition that allows the attempt it is taken on', () => {
    const found = [
      { kind: 'took_effect', result: 1, evidence },
      { kind: 'not_applied', evidence },
      { kind: 'undecided', evidence },
      { kind: 'unreadable', evidence },
    ] as const;
    const names = (step: AfterProbe<number>): { within: TransitionName; after: TransitionName } =>
      step.kind === 'not_applied'
        ? { within: step.withinWindow, after: step.afterWindow }
        : { within: step.transition, after: step.transition };
    for (const verdict of found) {
      const ownStep = names(afterProbe(own, verdict));
      expect(transition(ownStep.within, mine('sent'), ME)).not.toBeNull();
      expect(transition(ownStep.after, lapsed(mine('sent')), ME)).not.toBeNull();
      for (const view of [expired('sent'), expired('held')]) {
        const lapsedStep = names(afterProbe(lapsedHold, verdict));
        expect(transition(lapsedStep.within, view, ME)).not.toBeNull();
        expect(transition(lapsedStep.after, lapsed(view), ME)).not.toBeNull();
      }
    }
  });
});
