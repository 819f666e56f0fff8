/**
 * Every transition of the exactly-once protocol, allowed and refused; the steps that choose
 * the next one; and their agreement with the guard decision. (The diagram in
 * docs/operations.md: attempt-protocol.docs.spec.ts.)
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
  ATTEMPT_STATES,
  TRANSITIONS,
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

/** An attempt in `state`, by default another worker's within its lease. */
function at(state: AttemptState, overrides: Partial<AttemptView> = {}): AttemptView {
  return {
    state,
    owner: state === 'none' ? null : OTHER,
    leaseExpired: false,
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

/** Asserts `name` leads from each allowed view to `to`, and refuses each refused view. */
function check(
  name: TransitionName,
  to: AttemptState,
  allowed: readonly AttemptView[],
  refused: readonly AttemptView[],
): void {
  for (const view of allowed) expect([view, transition(name, view, ME)]).toEqual([view, to]);
  for (const view of refused) expect([view, transition(name, view, ME)]).toEqual([view, null]);
}

describe('the transitions', () => {
  it('begin, begin_sent: a fresh event, by any worker; never over an existing attempt', () => {
    check('begin', 'started', [at('none')], [at('started'), at('failed'), expired('sent')]);
    check('begin_sent', 'sent', [at('none')], [at('started'), at('failed'), expired('sent')]);
  });

  it('mark_sent: only the owner, only while its lease runs', () => {
    check(
      'mark_sent',
      'sent',
      [mine('started'), mine('sent')],
      [
        at('started'),
        { ...mine('started'), leaseExpired: true },
        mine('failed'),
        mine('in_doubt'),
        mine('succeeded'),
      ],
    );
  });

  it('complete: a started, sent or held attempt succeeds; a settled one does not', () => {
    check(
      'complete',
      'succeeded',
      [mine('sent'), mine('started'), expired('held')],
      [mine('failed'), mine('succeeded'), mine('resolved'), mine('in_doubt')],
    );
  });

  it('complete_late: an answer that arrives after the mark in doubt resolves it', () => {
    check(
      'complete_late',
      'resolved',
      [at('in_doubt')],
      [at('sent'), at('failed'), at('succeeded')],
    );
  });

  it('fail: only the owner records that its call had no effect', () => {
    check(
      'fail',
      'failed',
      [mine('started'), mine('sent'), { ...mine('sent'), leaseExpired: true }],
      [at('sent'), expired('sent'), mine('in_doubt'), mine('succeeded'), mine('held')],
    );
  });

  it('fail_probed: the owner, once its request can no longer land', () => {
    check(
      'fail_probed',
      'failed',
      [lapsed(mine('sent'))],
      [mine('sent'), lapsed(at('sent')), lapsed(mine('started')), lapsed(mine('held'))],
    );
  });

  it('take_over_probed: a sent or held attempt whose lease ran out, once the window passed', () => {
    check(
      'take_over_probed',
      'started',
      [lapsed(expired('sent')), lapsed(expired('held'))],
      [expired('sent'), expired('held'), lapsed(at('sent')), lapsed(expired('started'))],
    );
  });

  it('hold: not applied while the request may still land, by its owner or once the lease ran out', () => {
    check(
      'hold',
      'held',
      [mine('sent'), expired('sent'), expired('held')],
      [
        at('sent'),
        lapsed(mine('sent')),
        lapsed(expired('held')),
        expired('started'),
        mine('started'),
      ],
    );
  });

  it('retry_failed: a failed attempt is taken over by any worker', () => {
    check('retry_failed', 'started', [at('failed')], [at('in_doubt'), at('succeeded'), at('sent')]);
  });

  it('restart_own: only the owner restarts its started attempt', () => {
    check(
      'restart_own',
      'started',
      [mine('started'), mine('sent')],
      [at('started'), at('sent'), expired('sent'), mine('in_doubt'), mine('failed')],
    );
  });

  it('take_over_unsent: an unsent attempt once its lease ran out, never a sent one', () => {
    check(
      'take_over_unsent',
      'started',
      [expired('started')],
      [at('started'), expired('sent'), expired('in_doubt'), expired('failed')],
    );
  });

  it('take_over_sent: a sent attempt once its lease ran out, never within it', () => {
    check(
      'take_over_sent',
      'started',
      [expired('sent')],
      [at('sent'), mine('sent'), expired('started'), expired('in_doubt')],
    );
  });

  it('in_doubt: a live attempt, by whoever found it unclear; never a settled one', () => {
    check(
      'in_doubt',
      'in_doubt',
      [at('started'), at('sent'), expired('sent')],
      [at('failed'), at('in_doubt'), at('succeeded'), at('resolved')],
    );
  });

  it('in_doubt_probed_own: only while this worker owns it', () => {
    check(
      'in_doubt_probed_own',
      'in_doubt',
      [mine('started'), mine('sent')],
      [at('sent'), expired('sent'), mine('failed')],
    );
  });

  it('in_doubt_probed_expired: a sent attempt whose lease ran out', () => {
    check(
      'in_doubt_probed_expired',
      'in_doubt',
      [expired('sent'), expired('held')],
      [at('sent'), mine('sent'), expired('started'), expired('failed')],
    );
  });

  it('complete_probed_own: only while this worker owns it', () => {
    check(
      'complete_probed_own',
      'succeeded',
      [mine('started'), mine('sent')],
      [at('sent'), expired('sent'), mine('in_doubt')],
    );
  });

  it('complete_probed_expired: a sent attempt whose lease ran out', () => {
    check(
      'complete_probed_expired',
      'succeeded',
      [expired('sent'), expired('held')],
      [at('sent'), expired('started'), expired('in_doubt')],
    );
  });

  it('resolve: an open attempt is settled from outside', () => {
    check(
      'resolve',
      'resolved',
      [at('in_doubt'), at('started'), at('sent'), expired('held')],
      [at('failed'), at('succeeded'), at('resolved')],
    );
  });

  it('not_taken: only an attempt in doubt becomes failed', () => {
    check('not_taken', 'failed', [at('in_doubt')], [at('sent'), at('started'), at('resolved')]);
  });

  it('discard: an event dead-lettered without effect never takes effect; not one that did', () => {
    check(
      'discard',
      'discarded',
      [at('none'), at('failed')],
      [at('succeeded'), at('in_doubt'), at('sent'), expired('held'), at('resolved')],
    );
    const decision = decide({
      guard: {
        startedAttemptId: null,
        processed: false,
        blocked: false,
        blockedReason: null,
        attempt: recorded({ state: 'discarded' }),
      },
      workerId: ME,
      pending: null,
      mappingFailed: false,
    });
    expect(decision).toEqual({ kind: 'duplicate' });
  });

  it('refuses every move from a state outside its `from`, whoever asks', () => {
    const names = Object.keys(TRANSITIONS) as TransitionName[];
    expect(names).toHaveLength(21);
    for (const name of names) {
      for (const state of ATTEMPT_STATES.filter((s) => !TRANSITIONS[name].from.includes(s))) {
        const views = [mine(state), expired(state), { ...mine(state), leaseExpired: true }];
        for (const view of [...views, ...views.map(lapsed)]) {
          expect([name, state, transition(name, view, ME)]).toEqual([name, state, null]);
        }
      }
    }
  });

  it('nothing leaves succeeded or resolved, and only a person takes in_doubt anywhere but resolved', () => {
    const out = (state: AttemptState): TransitionName[] =>
      (Object.keys(TRANSITIONS) as TransitionName[]).filter((name) =>
        TRANSITIONS[name].from.includes(state),
      );
    expect(out('succeeded')).toEqual([]);
    expect(out('resolved')).toEqual([]);
    const fromDoubt = out('in_doubt').map((name) => [name, TRANSITIONS[name].to]);
    expect(fromDoubt).toEqual([
      ['complete_late', 'resolved'],
      ['resolve', 'resolved'],
      ['not_taken', 'failed'],
    ]);
  });
});

describe('viewOf', () => {
  it('reads a started attempt with sent_at as sent, and as held once held', () => {
    expect(viewOf(recorded({ sent: true }))?.state).toBe('sent');
    expect(viewOf(recorded({ sent: true, held: true, leaseExpired: true }))?.state).toBe('held');
    expect(viewOf(recorded({ state: 'succeeded', sent: true, held: true }))?.state).toBe(
      'succeeded',
    );
    expect(viewOf(recorded({}))?.state).toBe('started');
    expect(viewOf(recorded({ state: 'failed', sent: true }))?.state).toBe('failed');
  });

  it('no attempt is none; an unknown state or `sent` in the row is not a view', () => {
    expect(viewOf(null)).toEqual({
      state: 'none',
      owner: null,
      leaseExpired: false,
      windowPassed: false,
    });
    expect(viewOf(recorded({ state: 'paused' }))).toBeUndefined();
    expect(viewOf(recorded({ state: 'sent' }))).toBeUndefined();
    expect(viewOf(recorded({ state: 'held' }))).toBeUndefined();
  });
});

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
