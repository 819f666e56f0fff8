/**
 * Every transition of the exactly-once protocol's table, allowed and refused, and the view
 * of an attempt the table reads (viewOf). The steps and the guard decision that choose the
 * next transition are held to the table in attempt-steps.spec.ts; the diagram in
 * docs/operations.md in attempt-protocol.docs.spec.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { decide, type RecordedAttempt } from './attempt-decision.js';
import {
  ATTEMPT_STATES,
  TRANSITIONS,
  transition,
  viewOf,
  type AttemptState,
  type AttemptView,
  type TransitionName,
} from './attempt-protocol.js';

const ME = 'worker-a';
const OTHER = 'worker-b';

/**
 * An attempt in `state`, by default another worker's within its lease, sent when its
 * state says so (sent, held).
 */
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
/** This worker's attempt held for a late effect (a hold releases the lease). */
const myHeld = (): AttemptView => at('held', { owner: ME, leaseExpired: true });
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
      [
        at('sent'),
        expired('sent'),
        mine('in_doubt'),
        mine('succeeded'),
        mine('held'),
        myHeld(),
        lapsed(myHeld()),
      ],
    );
  });

  it('fail_probed: the owner, once its request can no longer land', () => {
    check(
      'fail_probed',
      'failed',
      [lapsed(mine('sent'))],
      [
        mine('sent'),
        lapsed(at('sent')),
        lapsed(mine('started')),
        lapsed(mine('held')),
        lapsed(myHeld()),
      ],
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
      [
        at('started'),
        at('sent'),
        expired('sent'),
        mine('in_doubt'),
        mine('failed'),
        myHeld(),
        lapsed(myHeld()),
      ],
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
      [
        at('sent'),
        mine('sent'),
        expired('started'),
        expired('in_doubt'),
        expired('held'),
        lapsed(expired('held')),
      ],
    );
  });

  it('in_doubt: a live or held attempt, by whoever found it unclear; never a settled one', () => {
    check(
      'in_doubt',
      'in_doubt',
      [at('started'), at('sent'), expired('sent'), expired('held'), myHeld()],
      [at('failed'), at('in_doubt'), at('succeeded'), at('resolved')],
    );
  });

  it('in_doubt_probed_own: only while this worker owns it, held meanwhile or not', () => {
    check(
      'in_doubt_probed_own',
      'in_doubt',
      [mine('started'), mine('sent'), myHeld()],
      [at('sent'), expired('sent'), mine('failed'), expired('held')],
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

  it('complete_probed_own: only while this worker owns it, held meanwhile or not', () => {
    check(
      'complete_probed_own',
      'succeeded',
      [mine('started'), mine('sent'), myHeld(), lapsed(myHeld())],
      [at('sent'), expired('sent'), mine('in_doubt'), expired('held')],
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

  it('not_taken: only an attempt in doubt, once its request can no longer land', () => {
    const sentInDoubt = at('in_doubt', { sent: true });
    check(
      'not_taken',
      'failed',
      [at('in_doubt'), lapsed(sentInDoubt)],
      [sentInDoubt, at('sent'), at('started'), at('resolved'), lapsed(at('held'))],
    );
  });

  it('discard: an event dead-lettered without effect never takes effect; not one that did', () => {
    check(
      'discard',
      'discarded',
      [at('none'), at('failed'), at('discarded'), mine('discarded')],
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

  it('a held attempt is sent again only by a read once its window ended (take_over_probed)', () => {
    const names = Object.keys(TRANSITIONS) as TransitionName[];
    const again = (view: AttemptView): TransitionName[] =>
      names.filter((name) => {
        const to = transition(name, view, ME);
        return to === 'started' || to === 'failed' || to === 'sent';
      });
    for (const view of [myHeld(), expired('held')]) {
      expect(again(view)).toEqual([]);
      expect(again(lapsed(view))).toEqual(['take_over_probed']);
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
    expect(viewOf(recorded({ state: 'in_doubt', sent: true }))?.sent).toBe(true);
    expect(viewOf(recorded({ state: 'in_doubt' }))?.sent).toBe(false);
  });

  it('no attempt is none; an unknown state or `sent` in the row is not a view', () => {
    expect(viewOf(null)).toEqual({
      state: 'none',
      owner: null,
      leaseExpired: false,
      sent: false,
      windowPassed: false,
    });
    expect(viewOf(recorded({ state: 'paused' }))).toBeUndefined();
    expect(viewOf(recorded({ state: 'sent' }))).toBeUndefined();
    expect(viewOf(recorded({ state: 'held' }))).toBeUndefined();
  });
});
