/**
 * The probe step of the exactly-once protocol (protocol/attempt-protocol.ts): a call that
 * may have taken effect is decided by reading Payflow's own state (payflow-probe.ts), and
 * what the read found is recorded as the protocol's afterProbe says: completed as after a
 * successful call, held or sent again (attempt-hold.ts), or in doubt.
 */
import type { AppLogger } from '../../logging/logger.js';
import { describeError } from '../../errors/app-error.js';
import type { TransactionBatcher } from '../../database/transaction-batcher.js';
import type { PayflowError } from '../../payflow/payflow.errors.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import type { OrdersOptions } from '../orders.options.js';
import { busyError, inDoubtError, type AttemptBegin } from './attempt-begin.js';
import type { AttemptComplete, StartedAttempt } from './attempt-complete.js';
import type { AttemptHold } from './attempt-hold.js';
import type {
  CommandAttemptRepository,
  ProbedHold,
} from './attempts/command-attempt.repository.js';
import { APPLIED, type CommandOutcome } from './command-outcome.js';
import { commandLogContext, type OrderCommand } from './order-command.js';
import { readPayflow } from './payflow-probe.js';
import type { LateEffectDecision, ProbeMetrics } from './probe-metrics.js';
import { afterProbe, type ProbeHold } from './protocol/attempt-steps.js';
import type { PendingOutcomes } from './protocol/pending-outcomes.js';

/** A read of Payflow found a stopped worker's call not applied, too late to land: call again. */
export interface TakenOver<T extends OrderEventType, S, R> {
  readonly kind: 'taken_over';
  readonly attempt: StartedAttempt<T, S, R>;
}

export class AttemptProbe {
  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly attempts: CommandAttemptRepository,
    private readonly begin: AttemptBegin,
    private readonly complete: AttemptComplete,
    private readonly hold: AttemptHold,
    /** The runner's memory: an outcome settled here supersedes what it remembers. */
    private readonly pending: PendingOutcomes,
    private readonly options: OrdersOptions,
    private readonly logger: AppLogger,
    private readonly metrics: ProbeMetrics | undefined,
  ) {}

  /**
   * An attempt that may have taken effect (`expired`: a stopped worker's sent attempt, or
   * one held for a late effect; `own`: this worker's call failed unclearly): Payflow's own
   * state decides, as the protocol's afterProbe says. Took effect → recorded as after a
   * successful call (`applied`); not applied → while its request may still land, held
   * (`waiting_for_late_effect`); after that, a stopped worker's attempt is taken over and
   * returned for a new call (`taken_over`), this worker's own is failed and its event's
   * retry sends it (`send_again`); unreadable or undecided → `in_doubt`. Losing the attempt
   * to another worker meanwhile is `busy`. `heldSince`: when the attempt was first held,
   * for the time to a decision.
   */
  async read<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    hold: ProbeHold,
    heldSince: Date | null = null,
  ): Promise<CommandOutcome | TakenOver<T, S, R>> {
    const { command, spec, attemptId } = attempt;
    const verdict = await readPayflow(command, spec, attempt.state, {
      deadlineMs: this.options.callDeadlineMs,
      logger: this.logger,
      metrics: this.metrics,
    });
    const owner = this.options.workerId;
    const found = { outcome: verdict.kind, evidence: verdict.evidence };
    const probed: ProbedHold = { hold: hold.kind, owner, ...found };
    const next = afterProbe(hold, verdict);
    const decided = (outcome: LateEffectDecision): void => {
      if (heldSince === null) return;
      this.metrics?.lateEffectDecided(
        spec.type,
        outcome,
        (Date.now() - heldSince.getTime()) / 1000,
      );
    };
    switch (next.kind) {
      case 'complete': {
        const outcome = await this.completeProbed(attempt, next.result, probed);
        if (outcome.kind === 'applied') decided('took_effect');
        return outcome;
      }
      case 'not_applied': {
        const held = await this.hold.notApplied(attempt, next, probed, decided);
        if (held.kind !== 'taken') return held;
        this.pending.forget(command.eventId);
        return { kind: 'taken_over', attempt: { ...attempt, attemptId: held.attemptId } };
      }
      case 'in_doubt': {
        const { errorCode, cause, callError } = next;
        const marked = await this.batcher.run((tx) =>
          this.begin.markInDoubt(tx, command, spec, attemptId, errorCode, cause, probed),
        );
        if (!marked && next.notMarked === 'busy')
          return { kind: 'busy', error: busyError(command) };
        if (marked) decided('in_doubt');
        if (callError !== undefined) logInDoubt(this.logger, command, spec.type, callError);
        return { kind: 'in_doubt', error: inDoubtError(command, cause, callError) };
      }
    }
  }

  /** The probe found the call took effect: recorded as after a successful call. */
  private async completeProbed<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    result: R,
    probed: ProbedHold,
  ): Promise<CommandOutcome> {
    const { command, attemptId } = attempt;
    const finish = this.complete.unit(attempt, result);
    const claimed = await this.batcher.run(async (tx) => {
      // Returned, not thrown: a unit that throws after a statement reruns the whole batch.
      if (!(await this.attempts.claimProbed(tx, attemptId, probed))) return false;
      await finish(tx);
      return true;
    });
    if (!claimed) return { kind: 'busy', error: busyError(command) };
    this.pending.forget(command.eventId);
    return APPLIED;
  }
}

/** A call in doubt, logged once where it is marked (no personal data). */
export function logInDoubt(
  logger: AppLogger,
  command: OrderCommand,
  type: string,
  callError: PayflowError,
): void {
  logger.warn(
    { ...commandLogContext(command, type), error: describeError(callError) },
    'command in doubt',
  );
}
