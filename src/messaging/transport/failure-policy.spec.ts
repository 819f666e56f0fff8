import { describe, expect, it } from '@jest/globals';
import { AppError, ValidationError } from '../../errors/app-error.js';
import {
  BlockedByEarlierFailureError,
  InDoubtError,
  InvalidEventError,
  InvalidJsonError,
  MappingFailedError,
} from '../../errors/dead-letter.errors.js';
import {
  PayflowAbortedError,
  PayflowClientError,
  PayflowForbiddenError,
  PayflowNetworkError,
  PayflowNotFoundError,
  PayflowRateLimitedError,
  PayflowServerError,
  PayflowTimeoutError,
  PayflowValidationError,
  type PayflowErrorInit,
} from '../../payflow/payflow.errors.js';
import { classifyFailure, decideFailure } from './failure-policy.js';
import type { RetryPolicy } from './retry-policy.js';

const init = (status?: number, retryAfterMs?: number): PayflowErrorInit => ({
  endpoint: 'createPayment',
  method: 'POST',
  reached: status === undefined ? 'maybe' : 'yes',
  ...(status === undefined ? {} : { status }),
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});

/** Like the orders' OrderBusyError: another worker's lease runs. */
class OrderBusyError extends AppError {
  readonly code = 'ORDER.BUSY';
  readonly transient = true;
  override readonly waitsForOther = true;
}

/** Like the engine's LateEffectPendingError: a call held until its late-effect window ends. */
class LateEffectPendingError extends AppError {
  readonly code = 'ATTEMPT.LATE_EFFECT_PENDING';
  readonly transient = true;
  override readonly waitsUntilMs = 500_000;
  override readonly retryAfterMs = 4_000;
}

const policy: RetryPolicy = {
  maxAttempts: 3,
  maxDurationMs: 60_000,
  baseDelayMs: 100,
  maxDelayMs: 1_000,
};

describe('classifyFailure', () => {
  it.each([
    [new InvalidJsonError('x'), 'invalid_json'],
    [new InvalidEventError('x'), 'invalid_event'],
    [new MappingFailedError('MAP.X', 'x'), 'mapping_failed'],
    [new BlockedByEarlierFailureError('x'), 'blocked_by_earlier_failure'],
    [new InDoubtError('x'), 'in_doubt'],
  ])('dead-letters %p with its own reason', (error, reason) => {
    expect(classifyFailure(error)).toEqual({ kind: 'dead_letter', reason });
  });

  it.each([
    new PayflowValidationError(init(422), []),
    new PayflowClientError(init(409)),
    new PayflowNotFoundError(init(404)),
    new PayflowForbiddenError(init(403)),
  ])('dead-letters a permanent Payflow failure as rejected_by_payflow (%p)', (error) => {
    expect(classifyFailure(error)).toEqual({ kind: 'dead_letter', reason: 'rejected_by_payflow' });
  });

  it.each([
    new PayflowServerError(init(503)),
    new PayflowNetworkError(init(), 'ECONNRESET'),
    new PayflowTimeoutError(init(), 'headers'),
    new PayflowAbortedError(init(), 'closed'),
    new PayflowRateLimitedError(init(429)),
  ])('retries a transient Payflow failure (%p)', (error) => {
    expect(classifyFailure(error)).toEqual({
      kind: 'retry',
      cause: 'transient',
      retryAfterMs: undefined,
      spendsAttempt: true,
    });
  });

  it('carries Retry-After of a 429', () => {
    expect(classifyFailure(new PayflowRateLimitedError(init(429, 7000)))).toEqual({
      kind: 'retry',
      cause: 'transient',
      retryAfterMs: 7000,
      spendsAttempt: true,
    });
  });

  it('retries other transient AppErrors and unknown errors', () => {
    expect(classifyFailure(new OrderBusyError('busy'))).toEqual({
      kind: 'retry',
      cause: 'transient',
      retryAfterMs: undefined,
      spendsAttempt: false,
    });
    for (const error of [
      new Error('connection terminated'),
      new TypeError('x'),
      'a string',
      null,
    ]) {
      expect(classifyFailure(error)).toEqual({
        kind: 'retry',
        cause: 'unknown',
        retryAfterMs: undefined,
        spendsAttempt: true,
      });
    }
  });

  it('dead-letters any other permanent AppError as mapping_failed', () => {
    expect(classifyFailure(new ValidationError('X.BAD', 'bad'))).toEqual({
      kind: 'dead_letter',
      reason: 'mapping_failed',
    });
  });
});

describe('decideFailure', () => {
  const history = (attempt: number, elapsed = 0) => ({
    attempt,
    firstAttemptAt: 0,
    now: elapsed,
  });

  it('retries within the budget and exhausts beyond it', () => {
    const error = new PayflowServerError(init(500));
    expect(decideFailure(error, history(1), policy, () => 0)).toEqual({
      action: 'retry',
      delayMs: 50,
      cause: 'transient',
      spendsAttempt: true,
    });
    expect(decideFailure(error, history(3), policy, () => 0)).toEqual({
      action: 'dead_letter',
      reason: 'retries_exhausted',
    });
    expect(decideFailure(new Error('db down'), history(1, 60_000), policy, () => 0)).toEqual({
      action: 'dead_letter',
      reason: 'retries_exhausted',
    });
  });

  it('waits for Retry-After', () => {
    expect(
      decideFailure(new PayflowRateLimitedError(init(429, 4000)), history(1), policy, () => 0),
    ).toEqual({ action: 'retry', delayMs: 4000, cause: 'transient', spendsAttempt: true });
  });

  it('waits for another worker at the first back-off step, bounded by the duration alone', () => {
    const busy = new OrderBusyError('busy');
    // Far beyond the attempts budget (3), still within the duration (60 s).
    expect(decideFailure(busy, history(3), policy, () => 0)).toEqual({
      action: 'retry',
      delayMs: 50,
      cause: 'transient',
      spendsAttempt: false,
    });
    expect(decideFailure(busy, history(1, 60_000), policy, () => 0)).toEqual({
      action: 'dead_letter',
      reason: 'retries_exhausted',
    });
  });

  it('waits out a late-effect hold beyond both budgets: the window bounds it', () => {
    const held = new LateEffectPendingError('held');
    expect(classifyFailure(held)).toEqual({
      kind: 'retry',
      cause: 'transient',
      retryAfterMs: 4_000,
      spendsAttempt: false,
      waitsUntilMs: 500_000,
    });
    // Beyond the attempts (3) and the duration (60 s): still a wait, at the error's delay.
    expect(decideFailure(held, history(3, 120_000), policy, () => 0)).toEqual({
      action: 'retry',
      delayMs: 4_000,
      cause: 'transient',
      spendsAttempt: false,
    });
  });

  it('dead-letters a rejection at once, whatever the attempt', () => {
    expect(decideFailure(new InDoubtError('x'), history(2), policy, () => 0)).toEqual({
      action: 'dead_letter',
      reason: 'in_doubt',
    });
  });
});
