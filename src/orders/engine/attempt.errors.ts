import { AppError, type ErrorMetadata } from '../../errors/app-error.js';

/** The attempt's lease ran out (or it was taken over) before its request could leave. */
export class AttemptNotOwnedError extends AppError {
  readonly code = 'ATTEMPT.NOT_OWNED';
  readonly transient = true;
}

/**
 * The send hook of a fresh event recorded no attempt (the event is not fresh, or the shared
 * statement failed): its request is not sent, and the event takes the path of begin first.
 */
export class AttemptNotBegunError extends AppError {
  readonly code = 'ATTEMPT.NOT_BEGUN';
  readonly transient = true;
}

/** An attempt was settled by someone else (resolveInDoubt) while its outcome was being recorded. */
export class AttemptSettledMeanwhileError extends Error {
  readonly code = 'ATTEMPT.SETTLED_MEANWHILE';

  constructor(count: number) {
    super(`${count} command attempt(s) of this batch were settled meanwhile; the batch is retried`);
    this.name = 'AttemptSettledMeanwhileError';
  }
}

/**
 * A call that failed unclearly did not take effect, as Payflow's own state showed: its
 * attempt is failed (no effect), and the event is retried, which sends the call again.
 */
export class ProbeNotAppliedError extends AppError {
  readonly code = 'ATTEMPT.PROBE_NOT_APPLIED';
  readonly transient = true;
}

/**
 * A read of Payflow found the event's call not applied, but its request may still land
 * (PAYFLOW_LATE_EFFECT_WINDOW has not passed since it left): the attempt is held, nothing
 * is sent again, and the event is retried after `retryAfterMs` to read Payflow again. The
 * wait ends by itself at `waitsUntilMs`, so it spends neither the attempts nor the duration
 * budget of the event (src/messaging/transport/failure-policy.ts).
 */
export class LateEffectPendingError extends AppError {
  readonly code = 'ATTEMPT.LATE_EFFECT_PENDING';
  readonly transient = true;
  override readonly waitsUntilMs: number;
  override readonly retryAfterMs: number;

  constructor(
    message: string,
    wait: { readonly untilMs: number; readonly retryAfterMs: number },
    options: { cause?: unknown; metadata?: ErrorMetadata } = {},
  ) {
    super(message, options);
    this.waitsUntilMs = wait.untilMs;
    this.retryAfterMs = wait.retryAfterMs;
  }
}
