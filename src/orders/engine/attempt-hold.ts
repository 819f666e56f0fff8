/**
 * The late-effect step of the exactly-once protocol (protocol/attempt-protocol.ts: `hold`,
 * `fail_probed`, `take_over_probed`): what a probe that found a call "not applied" leads
 * to. Payflow may still apply a request for PAYFLOW_LATE_EFFECT_WINDOW after it left, so
 * the ledger's clock decides, in one transaction, whether that read can be trusted (the
 * window has passed since the call's latest request left: it is sent again) or not (the
 * call is held: nothing is sent, its lease is released so that any worker's next read
 * decides, and the event is retried after the back-off of late-effect-wait.ts).
 */
import type { AppLogger } from '../../logging/logger.js';
import type { TransactionBatcher } from '../../database/transaction-batcher.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import type { OrdersOptions } from '../orders.options.js';
import { busyError } from './attempt-begin.js';
import type { StartedAttempt } from './attempt-complete.js';
import { LateEffectPendingError, ProbeNotAppliedError } from './attempt.errors.js';
import type {
  CommandAttemptRepository,
  ProbedHold,
} from './attempts/command-attempt.repository.js';
import type { LateEffectDecision, ProbeMetrics } from './probe-metrics.js';
import type { AfterProbe } from './protocol/attempt-steps.js';
import type { NotApplied } from './command-outcome.js';
import { commandLogContext } from './order-command.js';
import { lateEffectReadDelayMs } from './protocol/late-effect-wait.js';

export class AttemptHold {
  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly attempts: CommandAttemptRepository,
    private readonly options: OrdersOptions,
    private readonly logger: AppLogger,
    private readonly metrics: ProbeMetrics | undefined,
  ) {}

  /**
   * A probe found the call not applied. The ledger's clock decides in one transaction:
   * once the late-effect window has passed since its latest request left, it is sent again
   * (a stopped worker's attempt taken over and returned for a new call; this worker's own
   * failed, and its event's retry sends it: `send_again`); while the window runs it is held,
   * and the event waits to read again (`waiting_for_late_effect`). Losing the attempt to
   * another worker meanwhile is `busy`.
   */
  async notApplied<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    next: Extract<AfterProbe<R>, { kind: 'not_applied' }>,
    probed: ProbedHold,
    decided: (outcome: LateEffectDecision) => void,
  ): Promise<{ readonly kind: 'taken'; readonly attemptId: string } | NotApplied> {
    const { command, spec, attemptId } = attempt;
    const windowMs = this.options.lateEffectWindowMs;
    const errorCode = next.callError?.code ?? 'ATTEMPT.PROBE_NOT_APPLIED';
    // Returned, not thrown: a unit that throws after a statement reruns the whole batch.
    const outcome = await this.batcher.run(async (tx) => {
      if (next.afterWindow === 'fail_probed') {
        if (await this.attempts.failProbed(tx, attemptId, errorCode, probed, windowMs)) {
          return { kind: 'failed' } as const;
        }
      } else {
        const owner = {
          command: spec.type,
          owner: this.options.workerId,
          leaseMs: this.options.attemptLeaseMs,
        };
        const found = { outcome: probed.outcome, evidence: probed.evidence, windowMs };
        const taken = await this.attempts.takeOverProbed(tx, attemptId, owner, found);
        if (taken !== null) return { kind: 'taken', attemptId: taken.attemptId } as const;
      }
      const held = await this.attempts.holdForLateEffect(tx, attemptId, probed, windowMs);
      return held === null ? ({ kind: 'lost' } as const) : ({ kind: 'held', held } as const);
    });
    const about = { ...commandLogContext(command, spec.type), shown: probed.evidence.shown };
    switch (outcome.kind) {
      case 'failed':
        decided('sent_again');
        return {
          kind: 'send_again',
          error: new ProbeNotAppliedError(
            `${spec.type} ${command.eventId} of order ${command.orderId} did not take effect at Payflow (${probed.evidence.shown}) and its request can no longer land; it is sent again`,
            {
              cause: next.callError,
              metadata: { eventId: command.eventId, orderId: command.orderId },
            },
          ),
        };
      case 'taken':
        decided('sent_again');
        this.logger.info(
          about,
          'call not applied and its late-effect window has passed; sent again',
        );
        return outcome;
      case 'lost':
        return { kind: 'busy', error: busyError(command) };
      case 'held': {
        const { held } = outcome;
        if (held.first_hold) {
          this.metrics?.lateEffectHeld(spec.type);
          this.logger.info(
            { ...about, heldUntil: held.held_until.toISOString() },
            'call not applied yet, but its request may still land: held, Payflow is read again until the window ends',
          );
        }
        return {
          kind: 'waiting_for_late_effect',
          error: new LateEffectPendingError(
            `${spec.type} ${command.eventId} of order ${command.orderId} is waiting for a late effect until ${held.held_until.toISOString()} (${probed.evidence.shown}); it is not sent again before then`,
            {
              untilMs: Date.now() + Math.max(0, held.remaining_ms),
              retryAfterMs: lateEffectReadDelayMs(held.since_sent_ms, held.remaining_ms),
            },
            { metadata: { eventId: command.eventId, orderId: command.orderId } },
          ),
        };
      }
    }
  }
}
