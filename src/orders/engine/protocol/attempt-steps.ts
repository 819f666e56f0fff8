/**
 * The steps of the exactly-once protocol (attempt-protocol.ts) that choose the next
 * transition: after a stopped worker's lease (`afterLeaseExpired`), after a failed call of
 * this worker's own attempt (`afterCallFailure`) and after a probe (`afterProbe`). Each
 * names the transitions of TRANSITIONS it leads to; the statements' WHERE decides the rest.
 */
import { describeError } from '../../../errors/app-error.js';
import type { PayflowError } from '../../../payflow/payflow.errors.js';
import type { ProbeEvidence, ProbeVerdict } from '../command-spec.js';
import { classifyCallFailure } from './payflow-failure.js';

/** The error code of an attempt in doubt because its worker stopped after the request left. */
export const LEASE_EXPIRED_CODE = 'ATTEMPT.LEASE_EXPIRED';
const LEASE_EXPIRED_CAUSE =
  'its worker stopped during the Payflow call (the attempt lease expired)';

function unclearCallCause(callError: PayflowError): string {
  return `the Payflow call failed after it may have been applied (${describeError(callError)})`;
}

/** What the guard's `lease_expired` (a stopped worker's sent attempt) leads to. */
export type AfterLeaseExpired =
  /** Harmless to repeat (PUT, re-send): never in doubt, simply sent again. */
  | { readonly kind: 'send_again'; readonly transition: 'take_over_sent' }
  /** Read Payflow (outside the begin transaction), then `afterProbe` with hold `expired`. */
  | { readonly kind: 'probe' }
  | {
      readonly kind: 'in_doubt';
      readonly transition: 'in_doubt';
      readonly errorCode: string;
      readonly cause: string;
    };

export function afterLeaseExpired(call: {
  readonly mapped: boolean;
  readonly repeatable: boolean;
  readonly probes: boolean;
}): AfterLeaseExpired {
  if (call.mapped && call.repeatable) return { kind: 'send_again', transition: 'take_over_sent' };
  if (call.mapped && call.probes) return { kind: 'probe' };
  return {
    kind: 'in_doubt',
    transition: 'in_doubt',
    errorCode: LEASE_EXPIRED_CODE,
    cause: LEASE_EXPIRED_CAUSE,
  };
}

/** What a failed call of this worker's own attempt leads to (see payflow-failure.ts). */
export type AfterCallFailure =
  /** Not a Payflow error (a bug): the attempt stays started, for its lease to run out. */
  | { readonly kind: 'leave_started'; readonly error: unknown }
  /** No effect: failed, and the error goes on (transient → retried, permanent → rejected). */
  | { readonly kind: 'fail'; readonly transition: 'fail'; readonly error: PayflowError }
  /** It may have taken effect: read Payflow, then `afterProbe` with hold `own`. */
  | { readonly kind: 'probe'; readonly error: PayflowError }
  | {
      readonly kind: 'in_doubt';
      readonly transition: 'in_doubt';
      readonly error: PayflowError;
      readonly errorCode: string;
      readonly cause: string;
    };

export function afterCallFailure(
  error: unknown,
  call: { readonly repeatable: boolean; readonly probes: boolean },
): AfterCallFailure {
  const failure = classifyCallFailure(error, call.repeatable);
  switch (failure.kind) {
    case 'unknown':
      return { kind: 'leave_started', error: failure.error };
    case 'no_effect':
      return { kind: 'fail', transition: 'fail', error: failure.error };
    case 'in_doubt':
      if (call.probes) return { kind: 'probe', error: failure.error };
      return {
        kind: 'in_doubt',
        transition: 'in_doubt',
        error: failure.error,
        errorCode: failure.error.code,
        cause: unclearCallCause(failure.error),
      };
  }
}

/**
 * How the probed attempt is held: `expired`, a stopped worker's sent attempt whose lease ran
 * out; `own`, this worker's attempt whose call failed unclearly with `callError`. The writes
 * after the probe hold to the same condition, so that one another worker took meanwhile is
 * left alone.
 */
export type ProbeHold =
  { readonly kind: 'expired' } | { readonly kind: 'own'; readonly callError: PayflowError };

/** What a probe ends with: a verdict, or Payflow could not be read. */
export type ProbeResult<R> =
  ProbeVerdict<R> | { readonly kind: 'unreadable'; readonly evidence: ProbeEvidence };

/** What a probe's finding leads to. */
export type AfterProbe<R> =
  /** It took effect: recorded as after a successful call, with `result`. */
  | {
      readonly kind: 'complete';
      readonly transition: 'complete_probed_own' | 'complete_probed_expired';
      readonly result: R;
    }
  /**
   * Payflow shows it not applied. Once the late-effect window ran out (the ledger's clock
   * decides, in the statement's WHERE): a stopped worker's call is taken over and sent
   * again now (`take_over_probed`), this worker's own is failed and its event retried,
   * which sends it again (`fail_probed`). Within the window it is `held`: no second call,
   * and the event waits to read Payflow again.
   */
  | {
      readonly kind: 'not_applied';
      readonly afterWindow: 'take_over_probed' | 'fail_probed';
      readonly withinWindow: 'hold';
      readonly callError: PayflowError | undefined;
    }
  /** Unreadable or undecided: in doubt, as without a probe. */
  | {
      readonly kind: 'in_doubt';
      readonly transition: 'in_doubt_probed_own' | 'in_doubt_probed_expired';
      readonly errorCode: string;
      readonly cause: string;
      /** This worker's own failed call, when it was one. */
      readonly callError: PayflowError | undefined;
      /**
       * What it means when the mark finds the attempt no longer held: `busy` (another worker
       * took the expired attempt meanwhile), or still `in_doubt` (this worker's own call).
       */
      readonly notMarked: 'busy' | 'in_doubt';
    };

export function afterProbe<R>(hold: ProbeHold, found: ProbeResult<R>): AfterProbe<R> {
  const own = hold.kind === 'own' ? hold : undefined;
  switch (found.kind) {
    case 'took_effect':
      return {
        kind: 'complete',
        transition: own ? 'complete_probed_own' : 'complete_probed_expired',
        result: found.result,
      };
    case 'not_applied':
      return {
        kind: 'not_applied',
        afterWindow: own ? 'fail_probed' : 'take_over_probed',
        withinWindow: 'hold',
        callError: own?.callError,
      };
    case 'unreadable':
    case 'undecided': {
      const read =
        found.kind === 'unreadable' ? 'Payflow could not be read' : 'Payflow’s state does not tell';
      const why = own ? unclearCallCause(own.callError) : LEASE_EXPIRED_CAUSE;
      return {
        kind: 'in_doubt',
        transition: own ? 'in_doubt_probed_own' : 'in_doubt_probed_expired',
        errorCode: own ? own.callError.code : LEASE_EXPIRED_CODE,
        cause: `${why}, and ${read} (${found.evidence.shown})`,
        callError: own?.callError,
        notMarked: own ? 'in_doubt' : 'busy',
      };
    }
  }
}
