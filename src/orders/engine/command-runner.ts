/**
 * Carries out the exactly-once protocol (protocol/attempt-protocol.ts: its states, its
 * transitions, who may take an attempt over and what in doubt means) for every order event,
 * although Payflow's calls are not idempotent:
 *
 * 1. begin (one batched transaction, attempt-begin.ts): the guard decides
 *    (protocol/attempt-decision.ts) between nothing to do, an error (blocked, busy, in
 *    doubt), a probe and a call; for a call, the attempt is recorded as `started` with this
 *    worker's lease, with the rows the command writes before it.
 * 2. the Payflow call, with a deadline inside the lease. Just before its request leaves
 *    (after the client's 429 gate and a connection slot), `sent_at` is committed
 *    (the call's `onSend`, payflow-send-hook.ts): a call waiting behind the gate when its
 *    worker dies was never sent and is not in doubt. A fresh event that creates a payment
 *    takes steps 1 and 2 at once (begin_sent, attempt-send.ts): its call is made first,
 *    and its `onSend` records the attempt started and sent with the payment's rows.
 * 3. complete (one batched transaction): the attempt `succeeded`, the event id processed,
 *    the state changes and the status events (outbox), together. A failure of the call is
 *    recorded instead, as the protocol says (afterCallFailure, afterProbe): failed, settled
 *    by a probe, or in doubt. An outcome whose recording failed is kept in memory
 *    (protocol/pending-outcomes.ts) for the redelivery to resume.
 *
 * The command's span (OrderCommand.trace) follows it: its headers go with the Payflow call
 * (in the call's context, payflow-trace.ts) and onto every status event in the outbox;
 * the runner's log lines name its traceId.
 *
 * Steps 1 and 3 run through the TransactionBatcher, so that the state writes of many
 * events share one COMMIT; several fresh events of a command that creates a payment share
 * one begin statement. A batch unit may run twice, so the memory and the log lines change
 * only after `batcher.run` resolved.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { describeError } from '../../errors/app-error.js';
import { retryWithBackoff, type RetryOptions } from '../../timing/backoff.js';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { TransactionBatcher } from '../../database/transaction-batcher.js';
import { MappingFailedError } from '../../errors/dead-letter.errors.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import type { PayflowError } from '../../payflow/payflow.errors.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import { ORDERS_OPTIONS, type OrdersOptions } from '../orders.options.js';
import {
  AttemptBegin,
  busyError,
  inDoubtError,
  type Begun,
  type FreshItem,
} from './attempt-begin.js';
import { AttemptComplete, type StartedAttempt } from './attempt-complete.js';
import { AttemptSend } from './attempt-send.js';
import { AttemptHold } from './attempt-hold.js';
import {
  CommandAttemptRepository,
  type ProbedHold,
} from './attempts/command-attempt.repository.js';
import type { CommandSpec, Mapped } from './command-spec.js';
import { PROBE_METRICS, type LateEffectDecision, type ProbeMetrics } from './probe-metrics.js';
import { commandLogContext, type CommandOutcome, type OrderCommand } from './order-command.js';
import { readPayflow } from './payflow-probe.js';
import { afterCallFailure, afterProbe, type ProbeHold } from './protocol/attempt-steps.js';
import { PendingOutcomes } from './protocol/pending-outcomes.js';

@Injectable()
export class CommandRunner {
  /** Outcomes known here but not committed (the protocol's memory). */
  private readonly pending = new PendingOutcomes();
  /** Keys of the shared begin statements, one per command type. */
  private readonly beginKeys = new Map<OrderEventType, object>();
  private readonly send: AttemptSend;
  private readonly complete: AttemptComplete;
  private readonly hold: AttemptHold;
  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly attempts: CommandAttemptRepository,
    private readonly begin: AttemptBegin,
    private readonly outbox: OutboxWriter,
    @Inject(ORDERS_OPTIONS) private readonly options: OrdersOptions,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Optional() @Inject(PROBE_METRICS) private readonly metrics?: ProbeMetrics,
  ) {
    this.send = new AttemptSend(attempts, begin, options);
    this.complete = new AttemptComplete(attempts, outbox, logger);
    this.hold = new AttemptHold(batcher, attempts, options, logger, metrics);
  }

  /** Runs one command through begin → call → complete. */
  async run<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
  ): Promise<CommandOutcome> {
    let mapped: Mapped<S> | undefined;
    let mappingError: MappingFailedError | undefined;
    try {
      mapped = await spec.map(command);
    } catch (error) {
      if (!(error instanceof MappingFailedError)) throw error;
      mappingError = error;
    }
    // A fresh event that creates a payment begins in its call's send hook (begin_sent);
    // when that began nothing, the begin step comes first, as for every other event.
    let fresh: FreshItem | undefined;
    if (mapped?.newPayment !== undefined && this.pending.kindOf(command.eventId) === null) {
      const item = { command, newPayment: mapped.newPayment };
      const call = await this.callFresh(command, spec, mapped.state, item);
      if (call === 'applied') return call;
      // An attempt the hook may have recorded unheard never left: this worker's own call
      // had no effect (the guard then takes it over, restart_own, instead of busy).
      if (call.unheard) this.pending.remember(command.eventId, { kind: 'no_effect' });
      // The hook never ran (the call failed before): still fresh, begun with the others.
      if (!call.hookRan) fresh = item;
    }
    const begun =
      (fresh === undefined ? undefined : await this.beginFresh(command, spec.type, fresh)) ??
      (await this.batcher.run((tx) =>
        this.begin.one(
          tx,
          command,
          spec,
          mapped,
          mappingError,
          this.pending.kindOf(command.eventId),
        ),
      ));
    switch (begun.kind) {
      case 'duplicate':
        return 'duplicate';
      case 'throw':
        throw begun.error;
      case 'resume':
        await this.batcher.run(this.pending.outcome(command.eventId));
        this.pending.forget(command.eventId);
        return 'applied';
      case 'probe': {
        // A stopped worker's attempt whose request left: Payflow's own state decides.
        if (mapped === undefined) throw new Error('a probe without a mapping');
        const { attemptId, paymentId, heldSince } = begun;
        const probed = { command, spec, state: mapped.state, attemptId, paymentId };
        const started = await this.probe(probed, { kind: 'expired' }, heldSince);
        if (started !== 'settled') await this.callAndRecord(started);
        return 'applied';
      }
      case 'start':
        if (mapped === undefined) throw new Error('an attempt started without a mapping');
        if (begun.takenOverRepeatable !== undefined) {
          this.logger.info(
            { ...commandLogContext(command, spec.type), ...begun.takenOverRepeatable },
            'attempt of a stopped worker was sent, and its call is repeatable; sending it again',
          );
        }
        if (begun.takenOverUnsent !== undefined) {
          this.logger.info(
            { ...commandLogContext(command, spec.type), ...begun.takenOverUnsent },
            'attempt of a stopped worker was never sent; taking it over',
          );
        }
        // A recorded outcome of an earlier attempt is superseded by the new attempt (done
        // here, once the attempt is committed: a batch unit may run twice).
        this.pending.forget(command.eventId);
        await this.callAndRecord({
          command,
          spec,
          state: mapped.state,
          attemptId: begun.attemptId,
          paymentId: begun.paymentId,
        });
        return 'applied';
    }
  }

  /**
   * The begin step shared with the other fresh events of the same command that arrive
   * meanwhile (one statement for all). Undefined when this event is not fresh, or when the
   * shared statement failed (it then wrote nothing): the caller takes the one-event path.
   */
  private async beginFresh(
    command: OrderCommand,
    type: OrderEventType,
    item: FreshItem,
  ): Promise<Begun | undefined> {
    let key = this.beginKeys.get(type);
    if (key === undefined) {
      key = {};
      this.beginKeys.set(type, key);
    }
    try {
      return await this.batcher.runGrouped<FreshItem, Begun | undefined>(key, item, (tx, items) =>
        this.begin.many(tx, type, items),
      );
    } catch (error) {
      this.logger.debug(
        {
          type,
          eventId: command.eventId,
          traceId: command.trace.traceId,
          error: describeError(error),
        },
        'the shared begin statement failed; its events begin one by one',
      );
      return undefined;
    }
  }

  /**
   * A fresh event of a command that creates a payment: the call first, its begin and sent
   * in one step in the send hook (AttemptSend.callFresh), then its outcome recorded as
   * after any call. `not_begun` when nothing was begun (no request left).
   */
  private async callFresh<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    state: S,
    item: FreshItem,
  ): Promise<'applied' | { readonly hookRan: boolean; readonly unheard: boolean }> {
    const call = await this.send.callFresh(command, spec, state, item);
    if (call.kind === 'not_begun') return call;
    const { attemptId, paymentId, outcome } = call;
    const attempt = { command, spec, state, attemptId, paymentId };
    if (outcome.ok) await this.record(attempt, outcome.result);
    else await this.recordFailure(attempt, outcome.error);
    return 'applied';
  }

  private async callAndRecord<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
  ): Promise<void> {
    const { command, spec, state, attemptId } = attempt;
    let result: R;
    try {
      result = await this.send.call(command, spec, state, attemptId);
    } catch (error) {
      return this.recordFailure(attempt, error);
    }
    await this.record(attempt, result);
  }

  /** The call succeeded: complete, batched with other events' outcomes. */
  private async record<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    result: R,
  ): Promise<void> {
    const { command } = attempt;
    const finish = this.complete.unit(attempt, result);
    try {
      await this.batcher.run(finish);
    } catch (error) {
      // Payflow did it; only the recording failed. Keep the outcome, so that the retry of
      // this event records it instead of calling Payflow again.
      this.pending.remember(command.eventId, { kind: 'outcome', finish });
      throw error;
    }
  }

  /**
   * An attempt that may have taken effect (`expired`: a stopped worker's sent attempt, or
   * one held for a late effect; `own`: this worker's call failed unclearly): Payflow's own
   * state decides, as the protocol's afterProbe says. Took effect → recorded as after a
   * successful call (`settled`); not applied → while its request may still land, held and
   * the event retried later to read again (LateEffectPendingError); after that, a stopped
   * worker's attempt is taken over and returned for a new call, this worker's own is failed
   * and the event retried (thrown), which sends it again; unreadable or undecided → in
   * doubt, thrown. Losing an expired attempt to another worker meanwhile is busy.
   * `heldSince`: when the attempt was first held, for the time to a decision.
   */
  private async probe<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    hold: ProbeHold,
    heldSince: Date | null = null,
  ): Promise<StartedAttempt<T, S, R> | 'settled'> {
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
      case 'complete':
        await this.completeProbed(attempt, next.result, probed);
        decided('took_effect');
        return 'settled';
      case 'not_applied': {
        const taken = await this.hold.notApplied(attempt, next, probed, decided);
        this.pending.forget(command.eventId);
        return { ...attempt, attemptId: taken };
      }
      case 'in_doubt': {
        const { errorCode, cause, callError } = next;
        const marked = await this.batcher.run((tx) =>
          this.begin.markInDoubt(tx, command, spec, attemptId, errorCode, cause, probed),
        );
        if (!marked && next.notMarked === 'busy') throw busyError(command);
        if (marked) decided('in_doubt');
        if (callError !== undefined) this.logInDoubt(command, spec.type, callError);
        throw inDoubtError(command, cause, callError);
      }
    }
  }

  /** The probe found the call took effect: recorded as after a successful call. */
  private async completeProbed<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    result: R,
    probed: ProbedHold,
  ): Promise<void> {
    const { command, attemptId } = attempt;
    const finish = this.complete.unit(attempt, result);
    const claimed = await this.batcher.run(async (tx) => {
      // Returned, not thrown: a unit that throws after a statement reruns the whole batch.
      if (!(await this.attempts.claimProbed(tx, attemptId, probed))) return false;
      await finish(tx);
      return true;
    });
    if (!claimed) throw busyError(command);
    this.pending.forget(command.eventId);
  }

  /** The call failed: recorded as the protocol's afterCallFailure says. */
  private async recordFailure<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    error: unknown,
  ): Promise<void> {
    const { command, spec, state, attemptId, paymentId } = attempt;
    const next = afterCallFailure(error, {
      repeatable: spec.repeatable,
      probes: spec.probe !== undefined,
    });
    switch (next.kind) {
      case 'leave_started':
        this.logger.error(
          { ...commandLogContext(command, spec.type), error: describeError(error) },
          'unexpected failure during a Payflow call; its attempt stays started',
        );
        throw error;
      case 'fail': {
        const payflowError = next.error;
        try {
          // Retried for a while: when Postgres is restarting, only this process knows that
          // the call was not sent, and a crash before the record would leave it in doubt.
          await retryWithBackoff(
            () =>
              this.batcher.run(async (tx) => {
                // Only while this worker owns the attempt: one that took it over is calling.
                await this.attempts.markFailed(
                  tx,
                  attemptId,
                  payflowError.code,
                  this.options.workerId,
                );
                if (!payflowError.transient && spec.onFailure !== undefined) {
                  const rejected = {
                    kind: 'rejected',
                    state,
                    paymentId,
                    error: payflowError,
                  } as const;
                  const events = await spec.onFailure(tx, rejected, command);
                  this.outbox.defer(tx, events, undefined, command.trace.headers());
                }
              }),
            RECORD_RETRY,
          );
        } catch (recordError) {
          this.pending.remember(command.eventId, { kind: 'no_effect' });
          throw recordError;
        }
        throw payflowError;
      }
      case 'probe': {
        const settled = await this.probe(attempt, { kind: 'own', callError: next.error });
        // The protocol sends an own attempt again only through a retry of its event.
        if (settled !== 'settled') throw new Error('an own attempt cannot be taken over');
        return;
      }
      case 'in_doubt': {
        const { errorCode, cause } = next;
        await this.batcher.run((tx) =>
          this.begin.markInDoubt(tx, command, spec, attemptId, errorCode, cause),
        );
        this.logInDoubt(command, spec.type, next.error);
        throw inDoubtError(command, cause, next.error);
      }
    }
  }

  private logInDoubt(command: OrderCommand, type: string, callError: PayflowError): void {
    this.logger.warn(
      { ...commandLogContext(command, type), error: describeError(callError) },
      'command in doubt',
    );
  }
}

/**
 * The tries of a record that must not be lost: 5 retries after 250, 500, 1000, 2000 and
 * 2000 ms, about 6 s in all.
 */
const RECORD_RETRY: RetryOptions = {
  retries: 5,
  backoff: { baseDelayMs: 250, maxDelayMs: 2000, jitter: 'none' },
};
