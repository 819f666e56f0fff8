/**
 * Carries out the exactly-once protocol (protocol/attempt-protocol.ts: its states, its
 * transitions, who may take an attempt over and what in doubt means) for every order event,
 * although Payflow's calls are not idempotent. `run` reads as the protocol's steps, each in
 * a file of its own:
 *
 * 1. map the event (the handler's spec), before any transaction;
 * 2. a fresh event that creates a payment calls first: its send hook records the attempt
 *    started and sent with the payment's rows (begin_sent, attempt-send.ts);
 * 3. begin (attempt-begin.ts, one batched transaction): the guard decides
 *    (protocol/attempt-decision.ts) between nothing to do, a reason not to (blocked, busy,
 *    in doubt, a failed mapping), a read of Payflow and a call; for a call, the attempt is
 *    recorded `started` with this worker's lease and the rows the command writes before it;
 * 4. the Payflow call (attempt-send.ts), with a deadline inside the lease; just before its
 *    request leaves (after the 429 gate and a connection slot) its send hook commits
 *    `sent_at`, so a call that waited behind the gate when its worker died is not in doubt;
 *    or, for a stopped worker's sent attempt, the read of Payflow (attempt-probe.ts);
 * 5. record (attempt-complete.ts, one batched transaction): the attempt `succeeded`, the
 *    event processed, the state changes and the status events (outbox), together; a
 *    failure as the protocol's afterCallFailure says: failed, decided by a read of Payflow,
 *    held for a late effect (attempt-hold.ts), or in doubt. An outcome whose recording
 *    failed is kept in memory (protocol/pending-outcomes.ts) for the redelivery to resume.
 *
 * Every expected outcome is returned as a value (command-outcome.ts); only failures the
 * protocol does not know (Postgres down, a bug) are thrown. The command's span follows it:
 * its headers go with the Payflow call and onto every status event; log lines name its
 * traceId. Steps 3 and 5 share COMMITs with other events through the TransactionBatcher;
 * a batch unit may run twice, so the memory and the log lines change only after
 * `batcher.run` resolved.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { describeError } from '../../errors/app-error.js';
import { retryWithBackoff, type RetryOptions } from '../../timing/backoff.js';
import { APP_LOGGER } from '../../logging/logger.module.js';
import type { AppLogger } from '../../logging/logger.js';
import { TransactionBatcher } from '../../database/transaction-batcher.js';
import { MappingFailedError } from '../../errors/dead-letter.errors.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import { OrderBusyError } from '../order.errors.js';
import type { PayflowError } from '../../payflow/payflow.errors.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import { ORDERS_OPTIONS, type OrdersOptions } from '../orders.options.js';
import { AttemptBegin, inDoubtError, type Begun, type FreshItem } from './attempt-begin.js';
import { AttemptComplete, type StartedAttempt } from './attempt-complete.js';
import { APPLIED, type CommandOutcome } from './command-outcome.js';
import { AttemptSend } from './attempt-send.js';
import { AttemptHold } from './attempt-hold.js';
import { AttemptProbe, logInDoubt } from './attempt-probe.js';
import { CommandAttemptRepository } from './attempts/command-attempt.repository.js';
import type { CommandSpec, Mapped } from './command-spec.js';
import { PROBE_METRICS, type ProbeMetrics } from './probe-metrics.js';
import { commandLogContext, type OrderCommand } from './order-command.js';
import { afterCallFailure } from './protocol/attempt-steps.js';
import { PendingOutcomes } from './protocol/pending-outcomes.js';

@Injectable()
export class CommandRunner {
  /** Outcomes known here but not committed (the protocol's memory). */
  private readonly pending = new PendingOutcomes();
  /** Keys of the shared begin statements, one per command type. */
  private readonly beginKeys = new Map<OrderEventType, object>();
  private readonly send: AttemptSend;
  private readonly complete: AttemptComplete;
  private readonly prober: AttemptProbe;
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
    const hold = new AttemptHold(batcher, attempts, options, logger, metrics);
    this.prober = new AttemptProbe(
      batcher,
      attempts,
      begin,
      this.complete,
      hold,
      this.pending,
      options,
      logger,
      metrics,
    );
  }

  /** One event through the protocol: map, begin, call (or read Payflow), record. */
  async run<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
  ): Promise<CommandOutcome> {
    // 1. Map, before any transaction. A mapping failure takes effect after the guard, so
    //    that a processed event stays a no-op and a blocked order stays blocked.
    const mapping = await mapEvent(command, spec);

    // 2. A fresh event that creates a payment calls first: its send hook begins the attempt,
    //    started and sent at once (begin_sent). When that began nothing, it begins as below.
    let fresh: FreshItem | undefined;
    const newPayment = mapping.mapped?.newPayment;
    if (newPayment !== undefined && this.pending.kindOf(command.eventId) === null) {
      const item = { command, newPayment };
      const state = (mapping.mapped as Mapped<S>).state;
      const call = await this.send.callFresh(command, spec, state, item);
      if (call.kind === 'begun') {
        const { attemptId, paymentId } = call;
        return this.record({ command, spec, state, attemptId, paymentId }, call.outcome);
      }
      // An attempt the hook may have recorded unheard never left: this worker's own call
      // had no effect (the guard then takes it over, restart_own, instead of busy).
      if (call.unheard) this.pending.remember(command.eventId, { kind: 'no_effect' });
      // The hook never ran (the call failed before): still fresh, begun with the others.
      if (!call.hookRan) fresh = item;
    }

    // 3. Begin: the guard decides between nothing to do, a reason not to, a read of
    //    Payflow, and a call (protocol/attempt-decision.ts).
    const begun = await this.beginStep(command, spec, mapping, fresh);
    switch (begun.kind) {
      case 'done':
        return begun.outcome;
      case 'resume':
        // Payflow applied this worker's call, whose recording failed: record it now.
        await this.batcher.run(this.pending.outcome(command.eventId));
        this.pending.forget(command.eventId);
        return APPLIED;
      case 'probe': {
        // 4a. A stopped worker's attempt whose request left: Payflow's own state decides.
        const { attemptId, paymentId, heldSince } = begun;
        const state = requireMapped(mapping, 'a probe').state;
        const read = await this.prober.read(
          { command, spec, state, attemptId, paymentId },
          { kind: 'expired' },
          heldSince,
        );
        return read.kind === 'taken_over' ? this.callAndRecord(read.attempt) : read;
      }
      case 'start': {
        const state = requireMapped(mapping, 'an attempt').state;
        this.logTakeOver(command, spec.type, begun);
        // A recorded outcome of an earlier attempt is superseded by the new attempt (done
        // here, once the attempt is committed: a batch unit may run twice).
        this.pending.forget(command.eventId);
        // 4b. The call.
        const { attemptId, paymentId } = begun;
        return this.callAndRecord({ command, spec, state, attemptId, paymentId });
      }
    }
  }

  /**
   * The begin step, in a batched transaction: for a fresh event of a command that creates
   * a payment, the statement shared with the other fresh events of that command; else the
   * event's own. A retry that lost its attempt to another worker is `busy`.
   */
  private async beginStep<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    mapping: Mapping<S>,
    fresh: FreshItem | undefined,
  ): Promise<Begun> {
    const shared =
      fresh === undefined ? undefined : await this.beginFresh(command, spec.type, fresh);
    if (shared !== undefined) return shared;
    const pending = this.pending.kindOf(command.eventId);
    try {
      return await this.batcher.run((tx) =>
        this.begin.one(tx, command, spec, mapping.mapped, mapping.error, pending),
      );
    } catch (error) {
      // Thrown by the unit so that its rows rolled back; an outcome all the same.
      if (error instanceof OrderBusyError)
        return { kind: 'done', outcome: { kind: 'busy', error } };
      throw error;
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

  /** The call of a started attempt (its send hook commits `sent_at`), and its outcome recorded. */
  private async callAndRecord<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
  ): Promise<CommandOutcome> {
    const { command, spec, state, attemptId } = attempt;
    let call: CallResult<R>;
    try {
      call = { ok: true, result: await this.send.call(command, spec, state, attemptId) };
    } catch (error) {
      call = { ok: false, error };
    }
    return this.record(attempt, call);
  }

  /** 5. The outcome of a call recorded: complete on success, else as the protocol says. */
  private record<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    call: CallResult<R>,
  ): Promise<CommandOutcome> {
    return call.ok
      ? this.recordSuccess(attempt, call.result)
      : this.recordFailure(attempt, call.error);
  }

  /** The call succeeded: complete, batched with other events' outcomes. */
  private async recordSuccess<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    result: R,
  ): Promise<CommandOutcome> {
    const finish = this.complete.unit(attempt, result);
    try {
      await this.batcher.run(finish);
    } catch (error) {
      // Payflow did it; only the recording failed. Keep the outcome, so that the retry of
      // this event records it instead of calling Payflow again.
      this.pending.remember(attempt.command.eventId, { kind: 'outcome', finish });
      throw error;
    }
    return APPLIED;
  }

  /** The call failed: recorded as the protocol's afterCallFailure says. */
  private async recordFailure<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    error: unknown,
  ): Promise<CommandOutcome> {
    const { command, spec, attemptId } = attempt;
    const next = afterCallFailure(error, {
      repeatable: spec.repeatable,
      probes: spec.probe !== undefined,
    });
    switch (next.kind) {
      case 'leave_started':
        // Not an outcome: a failure the protocol does not know (a bug). Thrown as it came.
        this.logger.error(
          { ...commandLogContext(command, spec.type), error: describeError(error) },
          'unexpected failure during a Payflow call; its attempt stays started',
        );
        throw error;
      case 'fail':
        await this.recordFailed(attempt, next.error);
        return { kind: 'rejected', error: next.error };
      case 'probe': {
        const read = await this.prober.read(attempt, { kind: 'own', callError: next.error });
        // The protocol sends an own attempt again only through a retry of its event.
        if (read.kind === 'taken_over') throw new Error('an own attempt cannot be taken over');
        return read;
      }
      case 'in_doubt': {
        const { errorCode, cause } = next;
        await this.batcher.run((tx) =>
          this.begin.markInDoubt(tx, command, spec, attemptId, errorCode, cause),
        );
        logInDoubt(this.logger, command, spec.type, next.error);
        return { kind: 'in_doubt', error: inDoubtError(command, cause, next.error) };
      }
    }
  }

  /**
   * A call without effect (refused, or never sent): its attempt `failed` and, when Payflow
   * refused it for good, the command's failure events. Retried for a while: when Postgres is
   * restarting, only this process knows that the call had no effect, and a crash before the
   * record would leave it in doubt.
   */
  private async recordFailed<T extends OrderEventType, S, R>(
    { command, spec, state, attemptId, paymentId }: StartedAttempt<T, S, R>,
    payflowError: PayflowError,
  ): Promise<void> {
    try {
      await retryWithBackoff(
        () =>
          this.batcher.run(async (tx) => {
            // Only while this worker owns the attempt: one that took it over is calling.
            await this.attempts.markFailed(tx, attemptId, payflowError.code, this.options.workerId);
            if (!payflowError.transient && spec.onFailure !== undefined) {
              const rejected = { kind: 'rejected', state, paymentId, error: payflowError } as const;
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
  }

  private logTakeOver(command: OrderCommand, type: string, begun: Begun & { kind: 'start' }): void {
    if (begun.takenOverRepeatable !== undefined) {
      this.logger.info(
        { ...commandLogContext(command, type), ...begun.takenOverRepeatable },
        'attempt of a stopped worker was sent, and its call is repeatable; sending it again',
      );
    }
    if (begun.takenOverUnsent !== undefined) {
      this.logger.info(
        { ...commandLogContext(command, type), ...begun.takenOverUnsent },
        'attempt of a stopped worker was never sent; taking it over',
      );
    }
  }
}

/** What a Payflow call came to. */
type CallResult<R> =
  { readonly ok: true; readonly result: R } | { readonly ok: false; readonly error: unknown };

/** An event mapped, or why it cannot be. */
type Mapping<S> =
  | { readonly mapped: Mapped<S>; readonly error?: undefined }
  | { readonly mapped?: undefined; readonly error: MappingFailedError };

async function mapEvent<T extends OrderEventType, S, R>(
  command: OrderCommand<T>,
  spec: CommandSpec<T, S, R>,
): Promise<Mapping<S>> {
  try {
    return { mapped: await spec.map(command) };
  } catch (error) {
    if (!(error instanceof MappingFailedError)) throw error;
    return { error };
  }
}

/** The guard never starts or probes an attempt of an event that failed its mapping. */
function requireMapped<S>(mapping: Mapping<S>, what: string): Mapped<S> {
  if (mapping.mapped === undefined) throw new Error(`${what} without a mapping`);
  return mapping.mapped;
}

/**
 * The tries of a record that must not be lost: 5 retries after 250, 500, 1000, 2000 and
 * 2000 ms, about 6 s in all.
 */
const RECORD_RETRY: RetryOptions = {
  retries: 5,
  backoff: { baseDelayMs: 250, maxDelayMs: 2000, jitter: 'none' },
};
