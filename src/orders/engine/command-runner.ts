/**
 * How every order event takes effect exactly once, although Payflow's calls are not
 * idempotent:
 *
 * 1. begin (one batched transaction, attempt-begin.ts): the guard decides
 *    (attempt-decision.ts) between nothing to do, an error (blocked, busy, in doubt), and
 *    a call; for a call, the attempt is recorded as `started` with this worker's lease,
 *    with the rows the command writes before it.
 * 2. the Payflow call, with a deadline inside the lease. Just before its request leaves
 *    (after the client's 429 gate and a connection slot), `sent_at` is committed
 *    (the call's `onSend`, payflow-send-hook.ts): a call waiting behind the gate when its
 *    worker dies was never sent and is not in doubt.
 * 3. complete (one batched transaction): the attempt `succeeded`, the event id processed,
 *    the state changes and the status events (outbox), together. A failure of the call is
 *    recorded instead (failed, or in doubt: see payflow-failure.ts).
 *
 * The command's span (OrderCommand.trace) follows it: its headers go with the Payflow call
 * (in the call's context, payflow-trace.ts) and onto every status event in the outbox;
 * the runner's log lines name its traceId.
 *
 * Steps 1 and 3 run through the TransactionBatcher, so that the state writes of many
 * events share one COMMIT; several fresh events of a command that creates a payment share
 * one begin statement.
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import { describeError } from '../../common/app-error.js';
import {
  backoffDelayMs,
  retryWithBackoff,
  type BackoffPolicy,
  type RetryOptions,
} from '../../common/backoff.js';
import { APP_LOGGER } from '../../common/logger.module.js';
import { sleep } from '../../common/sleep.js';
import type { AppLogger } from '../../common/logger.js';
import type { Sql } from '../../database/database.js';
import { StatementGroup } from '../../database/statement-group.js';
import { TransactionBatcher, type BatchSql } from '../../database/transaction-batcher.js';
import { MappingFailedError } from '../../common/dead-letter.errors.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import { PayflowError } from '../../payflow/payflow.errors.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import { ORDERS_OPTIONS, type OrdersOptions } from '../orders.options.js';
import {
  AttemptBegin,
  busyError,
  inDoubtError,
  type Begun,
  type FreshItem,
} from './attempt-begin.js';
import type { PendingOutcome } from './attempt-decision.js';
import {
  AttemptNotOwnedError,
  AttemptSettledMeanwhileError,
  ProbeNotAppliedError,
} from './attempt.errors.js';
import {
  CommandAttemptRepository,
  type FinishedAttempt,
  type ProbedHold,
} from './command-attempt.repository.js';
import type { CommandSpec, Mapped, ProbeEvidence, ProbeVerdict } from './command-spec.js';
import { PROBE_METRICS, type ProbeMetrics } from './probe-metrics.js';
import type { CommandOutcome, OrderCommand } from './order-command.js';
import { classifyCallFailure } from './payflow-failure.js';

/** An outcome known in memory whose recording failed (e.g. a failed COMMIT). */
type Pending =
  | { readonly kind: 'outcome'; readonly finish: (tx: BatchSql) => Promise<void> }
  | { readonly kind: 'no_effect' };

/** A command whose attempt is started: what its call, and the record of its outcome, need. */
interface StartedAttempt<T extends OrderEventType, S, R> {
  readonly command: OrderCommand<T>;
  readonly spec: CommandSpec<T, S, R>;
  readonly state: S;
  readonly attemptId: string;
  readonly paymentId: string | null;
}

/** Bound of the in-memory pending outcomes. */
const MAX_PENDING = 10_000;

@Injectable()
export class CommandRunner {
  private readonly pending = new Map<string, Pending>();
  /** Key of the batch-wide write of finished attempts. */
  private readonly finishKey = {};
  /** Keys of the shared begin statements, one per command type. */
  private readonly beginKeys = new Map<OrderEventType, object>();
  /** The send marks of the requests about to leave, one autocommit statement at a time. */
  private readonly sendMarks = new StatementGroup<string, boolean>({
    run: async (attemptIds) => {
      const marked = await this.attempts.markSent(attemptIds, this.options.workerId);
      return attemptIds.map((id) => marked.has(id));
    },
  });

  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly attempts: CommandAttemptRepository,
    private readonly begin: AttemptBegin,
    private readonly outbox: OutboxWriter,
    @Inject(ORDERS_OPTIONS) private readonly options: OrdersOptions,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Optional() @Inject(PROBE_METRICS) private readonly metrics?: ProbeMetrics,
  ) {}

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
    const begun =
      (mapped?.newPayment === undefined
        ? undefined
        : await this.beginFresh(command, spec.type, { command, newPayment: mapped.newPayment })) ??
      (await this.batcher.run((tx) =>
        this.begin.one(tx, command, spec, mapped, mappingError, this.pendingKind(command.eventId)),
      ));
    switch (begun.kind) {
      case 'duplicate':
        return 'duplicate';
      case 'throw':
        throw begun.error;
      case 'resume': {
        const pending = this.pending.get(command.eventId);
        if (pending?.kind !== 'outcome') throw new Error('no outcome to resume');
        await this.batcher.run(pending.finish);
        this.pending.delete(command.eventId);
        return 'applied';
      }
      case 'probe': {
        if (mapped === undefined) throw new Error('a probe without a mapping');
        const started = await this.probeExpired(command, spec, mapped.state, begun);
        if (started !== 'settled') await this.callAndRecord(started);
        return 'applied';
      }
      case 'start':
        if (mapped === undefined) throw new Error('an attempt started without a mapping');
        if (begun.takenOverRepeatable !== undefined) {
          this.logger.info(
            {
              eventId: command.eventId,
              orderId: command.orderId,
              type: spec.type,
              traceId: command.trace.traceId,
              previousOwner: begun.takenOverRepeatable.previousOwner,
            },
            'attempt of a stopped worker was sent, and its call is repeatable; sending it again',
          );
        }
        if (begun.takenOverUnsent !== undefined) {
          this.logger.info(
            {
              eventId: command.eventId,
              orderId: command.orderId,
              traceId: command.trace.traceId,
              previousOwner: begun.takenOverUnsent.previousOwner,
            },
            'attempt of a stopped worker was never sent; taking it over',
          );
        }
        // A recorded outcome of an earlier attempt is superseded by the new attempt (done
        // here, once the attempt is committed: a batch unit may run twice).
        this.pending.delete(command.eventId);
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

  private async callAndRecord<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
  ): Promise<void> {
    const { command, spec, state, attemptId, paymentId } = attempt;
    let result: R;
    try {
      result = await spec.call(state, {
        signal: AbortSignal.timeout(this.options.callDeadlineMs),
        onSend: () => this.markSent(attemptId),
        trace: command.trace.headers(),
      });
    } catch (error) {
      return this.recordFailure(attempt, error);
    }
    const finish = async (tx: BatchSql): Promise<void> => {
      const events = await spec.complete(tx, { command, state, result, paymentId });
      this.deferFinish(tx, command, spec.type, attemptId);
      this.outbox.defer(tx, events, undefined, command.trace.headers());
    };
    try {
      await this.batcher.run(finish);
    } catch (error) {
      // Payflow did it; only the recording failed. Keep the outcome, so that the retry of
      // this event records it instead of calling Payflow again.
      this.remember(command.eventId, { kind: 'outcome', finish });
      throw error;
    }
  }

  /**
   * A stopped worker's attempt whose request left: Payflow's own state decides. Took effect
   * → recorded as after a successful call (`settled`); not applied → taken over, returned
   * for a new call; unreadable or undecided → in doubt, thrown. Losing the attempt to
   * another worker meanwhile is busy.
   */
  private async probeExpired<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    state: S,
    begun: Extract<Begun, { kind: 'probe' }>,
  ): Promise<StartedAttempt<T, S, R> | 'settled'> {
    const { attemptId, paymentId } = begun;
    const verdict = await this.runProbe(command, spec, state);
    const owner = this.options.workerId;
    const probed: ProbedHold = {
      hold: 'expired',
      owner,
      outcome: verdict.kind,
      evidence: verdict.evidence,
    };
    switch (verdict.kind) {
      case 'took_effect': {
        await this.completeProbed(
          command,
          spec,
          state,
          attemptId,
          paymentId,
          verdict.result,
          probed,
        );
        return 'settled';
      }
      case 'not_applied': {
        const taken = await this.batcher.run((tx) =>
          this.attempts.takeOverProbed(
            tx,
            attemptId,
            { command: spec.type, owner, leaseMs: this.options.attemptLeaseMs },
            { outcome: verdict.kind, evidence: verdict.evidence },
          ),
        );
        if (taken === null) throw busyError(command);
        this.pending.delete(command.eventId);
        return { command, spec, state, attemptId: taken, paymentId };
      }
      case 'unreadable':
      case 'undecided': {
        const cause = `its worker stopped during the Payflow call (the attempt lease expired), and ${verdict.kind === 'unreadable' ? 'Payflow could not be read' : 'Payflow’s state does not tell'} (${verdict.evidence.shown})`;
        const marked = await this.batcher.run((tx) =>
          this.begin.markInDoubt(
            tx,
            command,
            spec,
            attemptId,
            'ATTEMPT.LEASE_EXPIRED',
            cause,
            probed,
          ),
        );
        if (!marked) throw busyError(command);
        throw inDoubtError(command, cause);
      }
    }
  }

  /**
   * The probe of one attempt, retried with the house back-off while Payflow cannot be read;
   * logs and counts the decision.
   */
  private async runProbe<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    state: S,
  ): Promise<ProbeResult<R>> {
    const probe = spec.probe?.bind(spec);
    if (probe === undefined) throw new Error(`${spec.type} has no probe`);
    let verdict: ProbeResult<R> | undefined;
    for (let tryNumber = 1; verdict === undefined; tryNumber += 1) {
      try {
        verdict = await probe(state, {
          signal: AbortSignal.timeout(this.options.callDeadlineMs),
          trace: command.trace.headers(),
        });
      } catch (error) {
        if (!(error instanceof PayflowError)) throw error;
        if (tryNumber >= PROBE_TRIES) {
          verdict = {
            kind: 'unreadable',
            evidence: { read: error.endpoint, shown: `${error.code} after ${tryNumber} tries` },
          };
          break;
        }
        await sleep(backoffDelayMs(tryNumber, PROBE_BACKOFF));
      }
    }
    this.metrics?.probed(spec.type, verdict.kind);
    this.logger.info(
      {
        eventId: command.eventId,
        orderId: command.orderId,
        type: spec.type,
        traceId: command.trace.traceId,
        outcome: verdict.kind,
        read: verdict.evidence.read,
        shown: verdict.evidence.shown,
      },
      'call that may have taken effect decided by reading Payflow',
    );
    return verdict;
  }

  /** The probe found the call took effect: recorded as after a successful call. */
  private async completeProbed<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    state: S,
    attemptId: string,
    paymentId: string | null,
    result: R,
    probed: ProbedHold,
  ): Promise<void> {
    const claimed = await this.batcher.run(async (tx) => {
      // Returned, not thrown: a unit that throws after a statement reruns the whole batch.
      if (!(await this.attempts.claimProbed(tx, attemptId, probed))) return false;
      const events = await spec.complete(tx, { command, state, result, paymentId });
      this.deferFinish(tx, command, spec.type, attemptId);
      this.outbox.defer(tx, events, undefined, command.trace.headers());
      return true;
    });
    if (!claimed) throw busyError(command);
    this.pending.delete(command.eventId);
  }

  /** Commits `sent_at` before the request leaves; throws (nothing is sent) if not owned. */
  private async markSent(attemptId: string): Promise<void> {
    // Not in a TransactionBatcher batch: its COMMIT waits for every unit of the batch, and
    // a crash while its many callers woke one after the other left the rest unsent. The
    // marks of the requests ready together share one short autocommit statement instead,
    // whose answer releases them all in the same turn of the event loop; one statement
    // per request made them queue for pooled connections (p50 ~100 ms at 500 orders/s).
    if (!(await this.sendMarks.add(attemptId))) {
      throw new AttemptNotOwnedError(
        `attempt ${attemptId} is no longer this worker's (its lease ran out); the call is not sent`,
        { metadata: { attemptId } },
      );
    }
  }

  /** The attempt succeeded and the event is processed: written with the batch's others. */
  private deferFinish(tx: BatchSql, command: OrderCommand, type: string, attemptId: string): void {
    const { event, source } = command;
    const row: FinishedAttempt = {
      attemptId,
      eventId: event.eventId,
      orderId: event.orderId,
      type,
      topic: source.topic,
      partition: source.partition,
      offset: source.offset,
    };
    tx.defer(this.finishKey, [row], (sql, rows) => this.finishAll(sql, rows));
  }

  private async finishAll(tx: Sql, rows: readonly FinishedAttempt[]): Promise<void> {
    const finished = await this.attempts.finish(tx, rows);
    if (finished !== rows.length) {
      // Rare: resolveInDoubt settled one of them. The whole batch is retried; that event
      // then finds its attempt resolved and does nothing.
      this.logger.warn({ expected: rows.length, finished }, 'attempts settled meanwhile');
      throw new AttemptSettledMeanwhileError(rows.length - finished);
    }
  }

  private async recordFailure<T extends OrderEventType, S, R>(
    { command, spec, state, attemptId, paymentId }: StartedAttempt<T, S, R>,
    error: unknown,
  ): Promise<void> {
    const failure = classifyCallFailure(error, spec.repeatable);
    const context = {
      eventId: command.eventId,
      orderId: command.orderId,
      type: spec.type,
      traceId: command.trace.traceId,
    };
    switch (failure.kind) {
      case 'unknown':
        this.logger.error(
          { ...context, error: describeError(error) },
          'unexpected failure during a Payflow call; its attempt stays started',
        );
        throw error;
      case 'no_effect': {
        const payflowError = failure.error;
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
          this.remember(command.eventId, { kind: 'no_effect' });
          throw recordError;
        }
        throw payflowError;
      }
      case 'in_doubt': {
        if (spec.probe !== undefined) {
          return this.probeOwn({ command, spec, state, attemptId, paymentId }, failure.error);
        }
        const cause = `the Payflow call failed after it may have been applied (${describeError(failure.error)})`;
        await this.batcher.run((tx) =>
          this.begin.markInDoubt(tx, command, spec, attemptId, failure.error.code, cause),
        );
        this.logger.warn({ ...context, error: describeError(failure.error) }, 'command in doubt');
        throw inDoubtError(command, cause, failure.error);
      }
    }
  }

  /**
   * This worker's call failed in a way that may have taken effect: Payflow's own state
   * decides. Took effect → recorded as after a successful call; not applied → the attempt
   * failed (no effect) and the event is retried, which sends it again; unreadable or
   * undecided → in doubt, as without a probe.
   */
  private async probeOwn<T extends OrderEventType, S, R>(
    attempt: StartedAttempt<T, S, R>,
    callError: PayflowError,
  ): Promise<void> {
    const { command, spec, state, attemptId, paymentId } = attempt;
    const verdict = await this.runProbe(command, spec, state);
    const owner = this.options.workerId;
    const probed: ProbedHold = {
      hold: 'own',
      owner,
      outcome: verdict.kind,
      evidence: verdict.evidence,
    };
    switch (verdict.kind) {
      case 'took_effect':
        await this.completeProbed(
          command,
          spec,
          state,
          attemptId,
          paymentId,
          verdict.result,
          probed,
        );
        return;
      case 'not_applied':
        await this.batcher.run((tx) =>
          this.attempts.markFailed(tx, attemptId, callError.code, owner, {
            outcome: verdict.kind,
            evidence: verdict.evidence,
          }),
        );
        throw new ProbeNotAppliedError(
          `${spec.type} ${command.eventId} of order ${command.orderId} did not take effect at Payflow (${verdict.evidence.shown}); it is sent again`,
          { cause: callError, metadata: { eventId: command.eventId, orderId: command.orderId } },
        );
      case 'unreadable':
      case 'undecided': {
        const cause = `the Payflow call failed after it may have been applied (${describeError(callError)}), and ${verdict.kind === 'unreadable' ? 'Payflow could not be read' : 'Payflow’s state does not tell'} (${verdict.evidence.shown})`;
        await this.batcher.run((tx) =>
          this.begin.markInDoubt(tx, command, spec, attemptId, callError.code, cause, probed),
        );
        this.logger.warn(
          {
            eventId: command.eventId,
            orderId: command.orderId,
            type: spec.type,
            traceId: command.trace.traceId,
            error: describeError(callError),
          },
          'command in doubt',
        );
        throw inDoubtError(command, cause, callError);
      }
    }
  }

  private pendingKind(eventId: string): PendingOutcome | null {
    return this.pending.get(eventId)?.kind ?? null;
  }

  private remember(eventId: string, outcome: Pending): void {
    this.pending.delete(eventId);
    this.pending.set(eventId, outcome);
    if (this.pending.size > MAX_PENDING) {
      const oldest = this.pending.keys().next();
      if (oldest.done !== true) this.pending.delete(oldest.value);
    }
  }
}

/** What a probe ends with: a verdict, or Payflow could not be read. */
type ProbeResult<R> =
  ProbeVerdict<R> | { readonly kind: 'unreadable'; readonly evidence: ProbeEvidence };

/** Reads of Payflow a probe makes before it calls Payflow unreadable. */
const PROBE_TRIES = 4;
const PROBE_BACKOFF: BackoffPolicy = { baseDelayMs: 500, maxDelayMs: 4000 };

/**
 * The tries of a record that must not be lost: 5 retries after 250, 500, 1000, 2000 and
 * 2000 ms, about 6 s in all.
 */
const RECORD_RETRY: RetryOptions = {
  retries: 5,
  backoff: { baseDelayMs: 250, maxDelayMs: 2000, jitter: 'none' },
};
