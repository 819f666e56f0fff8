import { describe, expect, it } from '@jest/globals';
import {
  decide,
  type DecisionInput,
  type GuardRow,
  type PendingOutcome,
  type RecordedAttempt,
} from './attempt-decision.js';

const ME = 'worker-a';
const OTHER = 'worker-b';

function guard(overrides: Partial<GuardRow> = {}): GuardRow {
  return {
    startedAttemptId: null,
    processed: false,
    blocked: false,
    blockedReason: null,
    attempt: null,
    ...overrides,
  };
}

function attempt(overrides: Partial<RecordedAttempt> = {}): RecordedAttempt {
  return {
    id: '41',
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

function input(
  row: GuardRow,
  options: { pending?: PendingOutcome | null; mappingFailed?: boolean } = {},
): DecisionInput {
  return {
    guard: row,
    workerId: ME,
    pending: options.pending ?? null,
    mappingFailed: options.mappingFailed ?? false,
  };
}

describe('decide', () => {
  it('new: the guard recorded the attempt of a fresh event', () => {
    expect(decide(input(guard({ startedAttemptId: '7' })))).toEqual({
      kind: 'new',
      attemptId: '7',
    });
  });

  it('duplicate: the event was processed', () => {
    expect(decide(input(guard({ processed: true })))).toEqual({ kind: 'duplicate' });
  });

  it('duplicate wins over a blocked order and a failed mapping', () => {
    const row = guard({ processed: true, blocked: true });
    expect(decide(input(row, { mappingFailed: true }))).toEqual({ kind: 'duplicate' });
  });

  it('duplicate: the attempt succeeded or was resolved', () => {
    for (const state of ['succeeded', 'resolved']) {
      expect(decide(input(guard({ attempt: attempt({ state }) })))).toEqual({
        kind: 'duplicate',
      });
    }
  });

  it('blocked: an earlier event of the order was dead-lettered', () => {
    const row = guard({ blocked: true, blockedReason: 'mapping_failed', attempt: attempt() });
    expect(decide(input(row))).toEqual({ kind: 'blocked', reason: 'mapping_failed' });
  });

  it('in doubt: an earlier attempt is in doubt, even when the mapping now fails', () => {
    const row = guard({ attempt: attempt({ state: 'in_doubt' }) });
    expect(decide(input(row))).toEqual({ kind: 'in_doubt' });
    expect(decide(input(row, { mappingFailed: true }))).toEqual({ kind: 'in_doubt' });
  });

  it('busy: another worker holds the attempt within its lease', () => {
    const row = guard({ attempt: attempt({ sent: true }) });
    expect(decide(input(row))).toEqual({ kind: 'busy', owner: OTHER });
  });

  it("busy: this worker's own started attempt without a remembered outcome", () => {
    const row = guard({ attempt: attempt({ owner: ME }) });
    expect(decide(input(row))).toEqual({ kind: 'busy', owner: ME });
  });

  it('lease expired after the request left: in doubt', () => {
    const row = guard({ attempt: attempt({ id: '9', leaseExpired: true, sent: true }) });
    expect(decide(input(row))).toEqual({ kind: 'lease_expired', attemptId: '9' });
    expect(decide(input(row, { mappingFailed: true }))).toEqual({
      kind: 'lease_expired',
      attemptId: '9',
    });
  });

  it('retry: a stopped worker never sent its request, so it is taken over', () => {
    const row = guard({ attempt: attempt({ leaseExpired: true, sent: false }) });
    expect(decide(input(row))).toEqual({ kind: 'retry', reason: 'unsent' });
  });

  it('retry: an earlier attempt failed without effect', () => {
    const row = guard({ attempt: attempt({ state: 'failed', owner: OTHER }) });
    expect(decide(input(row))).toEqual({ kind: 'retry', reason: 'failed' });
  });

  it('retry: this worker remembers a call without effect it could not record', () => {
    const row = guard({ attempt: attempt({ owner: ME, sent: true }) });
    expect(decide(input(row, { pending: 'no_effect' }))).toEqual({
      kind: 'retry',
      reason: 'no_effect',
    });
  });

  it('a held attempt is read again, not restarted from a call without effect remembered here', () => {
    const held = attempt({ owner: ME, sent: true, held: true, leaseExpired: true });
    expect(decide(input(guard({ attempt: held }), { pending: 'no_effect' }))).toEqual({
      kind: 'lease_expired',
      attemptId: '41',
    });
  });

  it('retry (race): no attempt visible although the guard recorded none', () => {
    expect(decide(input(guard()))).toEqual({ kind: 'retry', reason: 'race' });
  });

  it('resume: this worker remembers the outcome of its own started attempt', () => {
    const row = guard({ attempt: attempt({ owner: ME, sent: true }) });
    expect(decide(input(row, { pending: 'outcome' }))).toEqual({ kind: 'resume' });
    expect(decide(input(row, { pending: 'outcome', mappingFailed: true }))).toEqual({
      kind: 'resume',
    });
  });

  it("a remembered outcome counts only for this worker's own attempt", () => {
    const row = guard({ attempt: attempt({ owner: OTHER }) });
    expect(decide(input(row, { pending: 'outcome' }))).toEqual({ kind: 'busy', owner: OTHER });
  });

  it('mapping failed: a fresh event (nothing recorded) or a retry records the failure', () => {
    expect(decide(input(guard(), { mappingFailed: true }))).toEqual({ kind: 'mapping_failed' });
    const failed = guard({ attempt: attempt({ state: 'failed' }) });
    expect(decide(input(failed, { mappingFailed: true }))).toEqual({ kind: 'mapping_failed' });
    const unsent = guard({ attempt: attempt({ leaseExpired: true }) });
    expect(decide(input(unsent, { mappingFailed: true }))).toEqual({ kind: 'mapping_failed' });
  });

  it('an unknown attempt state is refused', () => {
    const row = guard({ attempt: attempt({ state: 'paused' }) });
    expect(decide(input(row))).toEqual({ kind: 'unknown_state', state: 'paused' });
  });
});
