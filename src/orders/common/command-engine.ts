/**
 * How every order event takes effect exactly once, although Payflow's calls are not
 * idempotent:
 *
 * 1. begin (one batched transaction): a processed event id → nothing to do; a blocked
 *    order → BlockedByEarlierFailureError; an attempt of this event still `started` →
 *    another worker is calling (OrderBusyError, retried) or, once its lease has run out,
 *    the call is IN DOUBT (recorded, InDoubtError) if it was sent (`sent_at`), and taken
 *    over and sent by this delivery if it never left; else the command's rows are prepared
 *    and the attempt is recorded as `started` with this worker's lease.
 * 2. the Payflow call, with a deadline inside the lease. Just before its request leaves
 *    (after the client's 429 gate and a connection slot), `sent_at` is committed
 *    (payflow-send-hook.ts): a call waiting behind the gate when its worker dies was never
 *    sent and is not in doubt.
 * 3. complete (one batched transaction): the attempt `succeeded`, the event id processed,
 *    the state changes and the status events (outbox), together. A failure of the call is
 *    recorded instead (failed, or in doubt: see payflow-failure.ts).
 *
 * Steps 1 and 3 run through the TransactionBatcher, so that the state writes of many
 * events share one COMMIT.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER } from '../../common/logger.module.js';
import type { AppLogger } from '../../common/logger.js';
import { AppError, describeError } from '../../common/app-error.js';
import type { Sql } from '../../database/database.js';
import { StatementGroup } from '../../database/statement-group.js';
import { TransactionBatcher, type BatchSql } from '../../database/transaction-batcher.js';
import {
  BlockedByEarlierFailureError,
  InDoubtError,
  MappingFailedError,
} from '../../dead-letters/dead-letter.errors.js';
import { OutboxWriter } from '../../events/outbox-writer.js';
import type { PayflowError } from '../../payflow/payflow.errors.js';
import { withPayflowSendHook } from '../../payflow/payflow-send-hook.js';
import type { StatusEvent } from '../../payments/payment-status-events.js';
import { OrderBusyError } from '../order.errors.js';
import type { OrderEventType } from '../order-event.schema.js';
import { ORDERS_OPTIONS, type OrdersOptions } from '../orders.options.js';
import { classifyCallFailure } from './payflow-failure.js';
import type { CommandOutcome, OrderCommand } from './order-command.js';

/** The order's latest payment that Payflow created (the target of every other command). */
export interface LatestPayment {
  /** payflow-bridge's id (payments.id). */
  readonly id: string;
  readonly payflowId: string;
  readonly currency: string;
  readonly organizationId: string | null;
  readonly state: string;
  readonly providerStatus: string | null;
}

export interface PrepareContext<T extends OrderEventType, M> {
  readonly command: OrderCommand<T>;
  readonly mapped: M;
  readonly latestPayment: LatestPayment | null;
  /** An earlier attempt of this event failed without effect: this is its retry. */
  readonly retry: boolean;
  /**
   * For a command that creates a payment (`createsPayment`): the id its new payment row
   * must get (the attempt already names it). Null otherwise.
   */
  readonly newPaymentId: string | null;
}

export interface FreshContext<T extends OrderEventType, M> {
  readonly command: OrderCommand<T>;
  readonly mapped: M;
  readonly newPaymentId: string | null;
}

/** Placeholder number of the first parameter of `FreshWrites.params`. */
export const FRESH_PARAM_OFFSET = 8;

/**
 * CTEs run by the guard statement when the event is fresh. Each is `name AS (…)` and must
 * write only `FROM started` (a one-row relation when the attempt was recorded, else empty).
 * They may use the guard's parameters $1 (event id), $2 (order id) and $6 (the new payment
 * id) and their own from $8 (FRESH_PARAM_OFFSET) on, in `params` order.
 */
export interface FreshWrites<S> {
  readonly state: S;
  readonly ctes: string;
  readonly params: readonly unknown[];
}

/** Placeholder number of the first parameter of `FreshWritesMany.params`. */
export const FRESH_MANY_PARAM_OFFSET = 7;

/**
 * The rows of several fresh events, as CTEs of one guard statement (see
 * `CommandSpec.freshWritesMany`). The CTEs must write only from `fresh_rows` (n, event_id,
 * order_id, payment_id, attempt_id: one row per event whose attempt the statement recorded;
 * `n` is the event's 1-based position in the contexts) and take their own parameters from
 * $7 (FRESH_MANY_PARAM_OFFSET) on, in `params` order.
 */
export interface FreshWritesMany<S> {
  /** One state per context, in the contexts' order. */
  readonly states: readonly S[];
  readonly ctes: string;
  readonly params: readonly unknown[];
}

export interface Prepared<S> {
  /** Everything the call and the completion need. */
  readonly state: S;
  /** The payment the attempt is about (payments.id), when there is one. */
  readonly paymentId: string | null;
}

/** One event type's part in the engine. */
export interface CommandSpec<T extends OrderEventType, M, S, R> {
  readonly type: T;
  /** Repeating the call is harmless (PUT, re-send): an unclear failure is retried, never in doubt. */
  readonly repeatable: boolean;
  /** The command creates a payment row (its id is chosen before the attempt is recorded). */
  readonly createsPayment?: boolean;
  /**
   * Optional fast path of `prepare` for a command that needs nothing from the guard: the
   * rows to write before the call, as CTEs added to the guard statement (one round trip
   * for the whole begin step). Used only when the event turns out fresh; otherwise
   * `prepare` runs.
   */
  freshWrites?(context: FreshContext<T, M>): FreshWrites<S>;
  /**
   * Optional: `freshWrites` for several events at once, for a command that creates a
   * payment (`createsPayment`). The fresh events of a burst then begin with one guard
   * statement (one round trip) instead of one each; an event that turns out not to be fresh
   * (a duplicate, a retry, a blocked order), or a second event of the same order, takes the
   * one-event path.
   */
  freshWritesMany?(contexts: readonly FreshContext<T, M>[]): FreshWritesMany<S>;
  /**
   * Before any transaction: pure mapping, and checks that need Payflow (payment methods).
   * A MappingFailedError from here is thrown after the guard, so that a processed event
   * stays a no-op and a blocked order stays blocked.
   */
  map(command: OrderCommand<T>): M | Promise<M>;
  /**
   * In the begin transaction, after the guard: loads what the call needs (throwing
   * MappingFailedError for an unknown reference or a missing payment) and writes the rows
   * that must exist before the call.
   */
  prepare(tx: Sql, context: PrepareContext<T, M>): Promise<Prepared<S>>;
  /** The Payflow call. */
  call(state: S, signal: AbortSignal): Promise<R>;
  /**
   * In the complete transaction: state changes and the status events of the outcome. It may
   * `tx.defer` its writes to the end of the batch (one statement for all the batch's events)
   * when they cannot fail for one event's data.
   */
  complete(tx: BatchSql, state: S, result: R, command: OrderCommand<T>): Promise<StatusEvent[]>;
  /** In the transaction recording a permanent failure without effect. */
  onRejected?(
    tx: Sql,
    state: S,
    error: PayflowError,
    command: OrderCommand<T>,
  ): Promise<StatusEvent[]>;
  /** In the transaction that marks the attempt in doubt (once). */
  onInDoubt?(
    tx: Sql,
    paymentId: string | null,
    cause: string,
    command: OrderCommand<T>,
  ): Promise<StatusEvent[]>;
  /** In a transaction of its own when the mapping failed (after the guard). */
  onMappingFailed?(
    tx: Sql,
    error: MappingFailedError,
    command: OrderCommand<T>,
  ): Promise<StatusEvent[]>;
}

interface GuardRow {
  started_attempt_id: string | null;
  processed: boolean;
  blocked: boolean;
  blocked_reason: string | null;
  attempt_id: string | null;
  attempt_state: string | null;
  attempt_owner: string | null;
  lease_expired: boolean | null;
  attempt_sent: boolean | null;
  attempt_payment_id: string | null;
  payment_id: string | null;
  payflow_id: string | null;
  currency: string | null;
  organization_id: string | null;
  payment_state: string | null;
  provider_status: string | null;
}

/** An outcome known in memory whose recording failed (e.g. a failed COMMIT). */
type PendingOutcome =
  | { readonly kind: 'outcome'; readonly finish: (tx: BatchSql) => Promise<void> }
  | { readonly kind: 'no_effect' };

type Begun<S> =
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'throw'; readonly error: Error }
  | { readonly kind: 'resume'; readonly finish: (tx: BatchSql) => Promise<void> }
  | { readonly kind: 'start'; readonly state: S; readonly attemptId: string };

/** Bound of the in-memory pending outcomes. */
const MAX_PENDING = 10_000;

/**
 * The guard of an event and, when the event is fresh (not processed, order not blocked, no
 * attempt yet) and `$7` allows it, the insert of its attempt, in one statement: the common
 * case costs one round trip. Anything else is decided from the guard row.
 */
const GUARD_CTES = `
  WITH g AS (
    SELECT EXISTS (SELECT 1 FROM processed_events WHERE event_id = $1::uuid) AS processed,
           o.blocked_at IS NOT NULL AS blocked, o.blocked_reason,
           a.id AS attempt_id, a.state AS attempt_state, a.owner AS attempt_owner,
           a.lease_until <= clock_timestamp() AS lease_expired,
           a.sent_at IS NOT NULL AS attempt_sent,
           a.payment_id AS attempt_payment_id,
           p.id AS payment_id, p.payflow_id, p.currency, p.organization_id,
           p.state AS payment_state, p.provider_status
      FROM (VALUES (1)) AS one (x)
      LEFT JOIN orders o ON o.order_id = $2
      LEFT JOIN command_attempts a ON a.event_id = $1::uuid
      LEFT JOIN LATERAL (
        SELECT id, payflow_id, currency, organization_id, state, provider_status
          FROM payments
         WHERE order_id = $2 AND payflow_id IS NOT NULL AND state IN ('created', 'cancelled')
         ORDER BY created_at DESC, id DESC
         LIMIT 1) p ON true),
  started AS (
    INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                  payment_id)
    SELECT $1::uuid, $2, $3, 'started', $4,
           clock_timestamp() + make_interval(secs => $5::float8 / 1000),
           COALESCE($6::uuid, g.payment_id)
      FROM g
     WHERE $7::boolean AND NOT g.processed AND NOT g.blocked AND g.attempt_id IS NULL
    ON CONFLICT (event_id) DO NOTHING
    RETURNING id)`;

const GUARD_SELECT = `SELECT g.*, (SELECT id FROM started) AS started_attempt_id FROM g`;

/**
 * The guard of several events that need nothing from it but "fresh or not" (commands that
 * create a payment): the attempts of the fresh ones (not processed, order not blocked, no
 * attempt yet) are recorded in one statement; `fresh_rows` lists them for the command's
 * CTEs. $1 event ids, $2 order ids, $3 new payment ids (one per event, each order once),
 * $4 command, $5 owner, $6 lease in ms.
 */
const MANY_GUARD_CTES = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[]) WITH ORDINALITY
           AS x (event_id, order_id, payment_id, n)),
  fresh_input AS (
    SELECT x.* FROM input x
      LEFT JOIN orders o ON o.order_id = x.order_id
     WHERE o.blocked_at IS NULL
       AND NOT EXISTS (SELECT 1 FROM command_attempts a WHERE a.event_id = x.event_id)
       AND NOT EXISTS (SELECT 1 FROM processed_events e WHERE e.event_id = x.event_id)),
  started AS (
    INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until,
                                  payment_id)
    SELECT event_id, order_id, $4, 'started', $5,
           clock_timestamp() + make_interval(secs => $6::float8 / 1000), payment_id
      FROM fresh_input ORDER BY n
    ON CONFLICT (event_id) DO NOTHING
    RETURNING event_id, id),
  fresh_rows AS (
    SELECT x.n::int AS n, x.event_id, x.order_id, x.payment_id, s.id AS attempt_id
      FROM started s JOIN input x ON x.event_id = s.event_id)`;

const MANY_GUARD_SELECT = `SELECT n, attempt_id::text AS attempt_id FROM fresh_rows`;

/** An event waiting for the shared guard statement of its command. */
interface FreshItem<T extends OrderEventType, M> {
  readonly command: OrderCommand<T>;
  readonly mapped: M;
}

const GUARD_SQL = `${GUARD_CTES}\n  ${GUARD_SELECT}`;

const START_ATTEMPT_SQL = `
  INSERT INTO command_attempts (event_id, order_id, command, state, owner, lease_until, payment_id)
  VALUES ($1::uuid, $2, $3, 'started', $4,
          clock_timestamp() + make_interval(secs => $5::float8 / 1000), $6::uuid)
  ON CONFLICT (event_id) DO UPDATE
     SET state = 'started', owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
         payment_id = EXCLUDED.payment_id, error_code = NULL,
         started_at = clock_timestamp(), finished_at = NULL, sent_at = NULL
   WHERE command_attempts.state = 'failed'
      OR (command_attempts.state = 'started' AND command_attempts.owner = EXCLUDED.owner)
      OR (command_attempts.state = 'started' AND command_attempts.sent_at IS NULL
          AND command_attempts.lease_until <= clock_timestamp())
  RETURNING id`;

/**
 * The attempt's request is about to leave: only while this worker still owns it (its
 * lease did not run out and nobody took it over). Kept when the call sends again (a
 * client retry of an idempotent request, a 401 refresh).
 */
const MARK_SENT_SQL = `
  UPDATE command_attempts c SET sent_at = COALESCE(c.sent_at, clock_timestamp())
    FROM unnest($1::bigint[]) AS x (id)
   WHERE c.id = x.id AND c.state = 'started' AND c.owner = $2
     AND c.lease_until > clock_timestamp()
  RETURNING c.id::text AS id`;

/**
 * The attempts of a batch `succeeded` (or `resolved` when they were in doubt) and their
 * events processed, in one statement at the end of the batch.
 */
const FINISH_SQL = `
  WITH a AS (
    UPDATE command_attempts c
       SET state = CASE WHEN c.state = 'in_doubt' THEN 'resolved' ELSE 'succeeded' END,
           finished_at = clock_timestamp()
      FROM unnest($1::bigint[]) AS x (id)
     WHERE c.id = x.id AND c.state IN ('started', 'in_doubt')
    RETURNING c.id),
  e AS (
    INSERT INTO processed_events (event_id, order_id, type, topic, partition, "offset")
    SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[])
    ON CONFLICT (event_id) DO NOTHING)
  SELECT count(*)::int AS finished FROM a`;

interface Finished {
  readonly attemptId: string;
  readonly eventId: string;
  readonly orderId: string;
  readonly type: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
}

/** The attempt's lease ran out (or it was taken over) before its request could leave. */
export class AttemptNotOwnedError extends AppError {
  readonly code = 'ATTEMPT.NOT_OWNED';
  readonly transient = true;
}

/** An attempt was settled by someone else (resolveInDoubt) while its outcome was being recorded. */
export class AttemptSettledMeanwhileError extends Error {
  constructor(count: number) {
    super(`${count} command attempt(s) of this batch were settled meanwhile; the batch is retried`);
    this.name = 'AttemptSettledMeanwhileError';
  }
}

@Injectable()
export class OrderCommandEngine {
  private readonly pending = new Map<string, PendingOutcome>();
  /** Key of the batch-wide write of finished attempts. */
  private readonly finishKey = {};
  /** The send marks of the requests about to leave, one autocommit statement at a time. */
  private readonly sendMarks = new StatementGroup<string, boolean>({
    run: async (attemptIds) => {
      const rows = await this.batcher.runAlone<{ id: string }>(MARK_SENT_SQL, [
        attemptIds,
        this.options.workerId,
      ]);
      const marked = new Set(rows.map((row) => row.id));
      return attemptIds.map((id) => marked.has(id));
    },
  });

  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly outbox: OutboxWriter,
    @Inject(ORDERS_OPTIONS) private readonly options: OrdersOptions,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  get workerId(): string {
    return this.options.workerId;
  }

  /** Runs one command through begin → call → complete. */
  async run<T extends OrderEventType, M, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, M, S, R>,
  ): Promise<CommandOutcome> {
    let mapped: M | undefined;
    let mappingError: MappingFailedError | undefined;
    try {
      mapped = await spec.map(command);
    } catch (error) {
      if (!(error instanceof MappingFailedError)) throw error;
      mappingError = error;
    }
    const begun =
      (mappingError === undefined && spec.freshWritesMany !== undefined
        ? await this.beginFresh(command, spec, mapped as M)
        : undefined) ??
      (await this.batcher.run((tx) => this.begin(tx, command, spec, mapped as M, mappingError)));
    switch (begun.kind) {
      case 'duplicate':
        return 'duplicate';
      case 'throw':
        throw begun.error;
      case 'resume':
        await this.batcher.run(begun.finish);
        this.pending.delete(command.eventId);
        return 'applied';
      case 'start':
        // A recorded outcome of an earlier attempt is superseded by the new attempt (done
        // here, once the attempt is committed: a batch unit may run twice).
        this.pending.delete(command.eventId);
        await this.callAndRecord(command, spec, begun.state, begun.attemptId);
        return 'applied';
    }
  }

  /**
   * Adds status events to the outbox in the caller's (batched) transaction, each checked
   * against its schema: the events of every unit of the batch are inserted together at its end.
   */
  emit(tx: BatchSql, events: readonly StatusEvent[]): void {
    this.outbox.defer(tx, events);
  }

  /**
   * The begin step shared with the other fresh events of the same command that arrive
   * meanwhile (one statement for all). Undefined when this event is not fresh, or when the
   * shared statement failed (it then wrote nothing): the caller takes the one-event path.
   */
  private async beginFresh<T extends OrderEventType, M, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, M, S, R>,
    mapped: M,
  ): Promise<Begun<S> | undefined> {
    try {
      return await this.batcher.runGrouped<FreshItem<T, M>, Begun<S> | undefined>(
        spec,
        { command, mapped },
        (tx, items) => this.beginMany(tx, spec, items),
      );
    } catch (error) {
      this.logger.debug(
        { type: spec.type, error: describeError(error) },
        'the shared begin statement failed; its events begin one by one',
      );
      return undefined;
    }
  }

  private async beginMany<T extends OrderEventType, M, S, R>(
    tx: BatchSql,
    spec: CommandSpec<T, M, S, R>,
    items: readonly FreshItem<T, M>[],
  ): Promise<(Begun<S> | undefined)[]> {
    const results: (Begun<S> | undefined)[] = items.map(() => undefined);
    if (spec.freshWritesMany === undefined || spec.createsPayment !== true) return results;
    // One statement writes an order's row (and an event's attempt) once: repeats take the
    // one-event path.
    const orders = new Set<string>();
    const events = new Set<string>();
    const chosen: number[] = [];
    items.forEach(({ command }, index) => {
      if (orders.has(command.orderId) || events.has(command.eventId)) return;
      orders.add(command.orderId);
      events.add(command.eventId);
      chosen.push(index);
    });
    const contexts: FreshContext<T, M>[] = chosen.map((index) => {
      const item = items[index] as FreshItem<T, M>;
      return { command: item.command, mapped: item.mapped, newPaymentId: randomUUID() };
    });
    const fresh = spec.freshWritesMany(contexts);
    const rows = await tx.query<{ n: number; attempt_id: string }>(
      `${MANY_GUARD_CTES},\n  ${fresh.ctes}\n  ${MANY_GUARD_SELECT}`,
      [
        contexts.map((context) => context.command.eventId),
        contexts.map((context) => context.command.orderId),
        contexts.map((context) => context.newPaymentId),
        spec.type,
        this.options.workerId,
        this.options.attemptLeaseMs,
        ...fresh.params,
      ],
    );
    const started = new Map(rows.map((row) => [Number(row.n), row.attempt_id]));
    chosen.forEach((itemIndex, position) => {
      const attemptId = started.get(position + 1);
      const state = fresh.states[position];
      if (attemptId !== undefined && state !== undefined) {
        results[itemIndex] = { kind: 'start', state, attemptId };
      }
    });
    return results;
  }

  private async begin<T extends OrderEventType, M, S, R>(
    tx: BatchSql,
    command: OrderCommand<T>,
    spec: CommandSpec<T, M, S, R>,
    mapped: M,
    mappingError: MappingFailedError | undefined,
  ): Promise<Begun<S>> {
    const { eventId, orderId } = command;
    const newPaymentId = spec.createsPayment === true ? randomUUID() : null;
    const fresh =
      mappingError === undefined && spec.freshWrites !== undefined
        ? spec.freshWrites({ command, mapped, newPaymentId })
        : undefined;
    const [guard] = await tx.query<GuardRow>(
      fresh === undefined ? GUARD_SQL : `${GUARD_CTES},\n  ${fresh.ctes}\n  ${GUARD_SELECT}`,
      [
        eventId,
        orderId,
        spec.type,
        this.options.workerId,
        this.options.attemptLeaseMs,
        newPaymentId,
        mappingError === undefined,
        ...(fresh?.params ?? []),
      ],
    );
    if (guard === undefined) throw new Error('the order guard query returned no row');
    const latestPayment: LatestPayment | null =
      guard.payment_id === null || guard.payflow_id === null
        ? null
        : {
            id: guard.payment_id,
            payflowId: guard.payflow_id,
            currency: (guard.currency ?? '').trim(),
            organizationId: guard.organization_id,
            state: guard.payment_state ?? 'created',
            providerStatus: guard.provider_status,
          };
    if (guard.started_attempt_id !== null) {
      // The common case: a fresh event, its attempt recorded by the guard statement. A
      // failure in prepare rolls the attempt back with the rest of this unit.
      if (fresh !== undefined) {
        return { kind: 'start', state: fresh.state, attemptId: guard.started_attempt_id };
      }
      const context = { command, mapped, latestPayment, retry: false, newPaymentId };
      const prepared = await spec.prepare(tx, context);
      return { kind: 'start', state: prepared.state, attemptId: guard.started_attempt_id };
    }
    if (guard.processed) return { kind: 'duplicate' };
    // Decisions that wrote nothing are returned, not thrown: a unit that throws after a
    // statement makes the batcher roll back and rerun its whole batch.
    if (guard.blocked) {
      const error = new BlockedByEarlierFailureError(
        `order ${orderId} is blocked by an earlier dead-lettered event (${guard.blocked_reason ?? 'no reason recorded'})`,
        { metadata: { orderId, eventId } },
      );
      return { kind: 'throw', error };
    }
    let retry = false;
    switch (guard.attempt_state) {
      case null:
        break;
      case 'failed':
        retry = true;
        break;
      case 'succeeded':
      case 'resolved':
        return { kind: 'duplicate' };
      case 'in_doubt':
        return { kind: 'throw', error: this.inDoubtError(command, 'an earlier attempt') };
      case 'started': {
        const pending =
          guard.attempt_owner === this.options.workerId ? this.pending.get(eventId) : undefined;
        if (pending?.kind === 'outcome') return { kind: 'resume', finish: pending.finish };
        if (pending?.kind === 'no_effect') {
          retry = true;
          break;
        }
        if (guard.lease_expired === true && guard.attempt_sent === false) {
          // Its worker died before the request left (e.g. behind the 429 gate): nothing
          // reached Payflow, so this delivery takes the attempt over and sends it.
          this.logger.info(
            { eventId, orderId, previousOwner: guard.attempt_owner },
            'attempt of a stopped worker was never sent; taking it over',
          );
          retry = true;
          break;
        }
        if (guard.lease_expired === true && guard.attempt_id !== null) {
          const cause = 'its worker stopped during the Payflow call (the attempt lease expired)';
          await this.markInDoubt(
            tx,
            command,
            spec,
            guard.attempt_id,
            'ATTEMPT.LEASE_EXPIRED',
            cause,
          );
          return { kind: 'throw', error: this.inDoubtError(command, cause) };
        }
        const error = new OrderBusyError(
          `event ${eventId} of order ${orderId} is being handled by worker ${guard.attempt_owner ?? '?'}`,
          { metadata: { orderId, eventId } },
        );
        return { kind: 'throw', error };
      }
      default:
        throw new Error(`attempt of event ${eventId} is in an unknown state`);
    }
    if (mappingError !== undefined) {
      if (spec.onMappingFailed !== undefined) {
        this.emit(tx, await spec.onMappingFailed(tx, mappingError, command));
      }
      return { kind: 'throw', error: mappingError };
    }
    // A retry (or a race lost to another worker): prepare, then take the attempt over.
    const prepared = await spec.prepare(tx, {
      command,
      mapped,
      latestPayment,
      retry,
      newPaymentId,
    });
    const [attempt] = await tx.query<{ id: string }>(START_ATTEMPT_SQL, [
      eventId,
      orderId,
      spec.type,
      this.options.workerId,
      this.options.attemptLeaseMs,
      prepared.paymentId,
    ]);
    if (attempt === undefined) {
      throw new OrderBusyError(`event ${eventId} of order ${orderId} is being handled elsewhere`, {
        metadata: { orderId, eventId },
      });
    }
    return { kind: 'start', state: prepared.state, attemptId: attempt.id };
  }

  private async callAndRecord<T extends OrderEventType, M, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, M, S, R>,
    state: S,
    attemptId: string,
  ): Promise<void> {
    let result: R;
    try {
      const signal = withPayflowSendHook(AbortSignal.timeout(this.options.callDeadlineMs), () =>
        this.markSent(attemptId),
      );
      result = await spec.call(state, signal);
    } catch (error) {
      return this.recordFailure(command, spec, state, attemptId, error);
    }
    await this.options.hooks.afterPayflowCall?.(spec.type, command.eventId);
    const finish = async (tx: BatchSql): Promise<void> => {
      const events = await spec.complete(tx, state, result, command);
      this.deferFinish(tx, command, spec.type, attemptId);
      this.emit(tx, events);
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
    const row: Finished = {
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

  private async finishAll(tx: Sql, rows: readonly Finished[]): Promise<void> {
    const [result] = await tx.query<{ finished: number }>(FINISH_SQL, [
      rows.map((row) => row.attemptId),
      rows.map((row) => row.eventId),
      rows.map((row) => row.orderId),
      rows.map((row) => row.type),
      rows.map((row) => row.topic),
      rows.map((row) => row.partition),
      rows.map((row) => row.offset),
    ]);
    const finished = result?.finished ?? 0;
    if (finished !== rows.length) {
      // Rare: resolveInDoubt settled one of them. The whole batch is retried; that event
      // then finds its attempt resolved and does nothing.
      this.logger.warn({ expected: rows.length, finished }, 'attempts settled meanwhile');
      throw new AttemptSettledMeanwhileError(rows.length - finished);
    }
  }

  private async recordFailure<T extends OrderEventType, M, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, M, S, R>,
    state: S,
    attemptId: string,
    error: unknown,
  ): Promise<never> {
    const failure = classifyCallFailure(error, spec.repeatable);
    const context = { eventId: command.eventId, orderId: command.orderId, type: spec.type };
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
          await retryForAWhile(() =>
            this.batcher.run(async (tx) => {
              // Only while this worker owns the attempt: one that took it over is calling.
              await tx.execute(
                `UPDATE command_attempts SET state = 'failed', error_code = $2,
                        finished_at = clock_timestamp()
                  WHERE id = $1 AND state = 'started' AND owner = $3`,
                [attemptId, payflowError.code, this.options.workerId],
              );
              if (!payflowError.transient && spec.onRejected !== undefined) {
                this.emit(tx, await spec.onRejected(tx, state, payflowError, command));
              }
            }),
          );
        } catch (recordError) {
          this.remember(command.eventId, { kind: 'no_effect' });
          throw recordError;
        }
        throw payflowError;
      }
      case 'in_doubt': {
        const cause = `the Payflow call failed after it may have been applied (${describeError(failure.error)})`;
        await this.batcher.run((tx) =>
          this.markInDoubt(tx, command, spec, attemptId, failure.error.code, cause),
        );
        this.logger.warn({ ...context, error: describeError(failure.error) }, 'command in doubt');
        throw this.inDoubtError(command, cause, failure.error);
      }
    }
  }

  private async markInDoubt<T extends OrderEventType, M, S, R>(
    tx: BatchSql,
    command: OrderCommand<T>,
    spec: CommandSpec<T, M, S, R>,
    attemptId: string,
    errorCode: string,
    cause: string,
  ): Promise<void> {
    const rows = await tx.query<{ payment_id: string | null }>(
      `UPDATE command_attempts SET state = 'in_doubt', error_code = $2,
              finished_at = clock_timestamp()
        WHERE id = $1 AND state = 'started'
       RETURNING payment_id`,
      [attemptId, errorCode],
    );
    const row = rows[0];
    if (row === undefined || spec.onInDoubt === undefined) return;
    this.emit(tx, await spec.onInDoubt(tx, row.payment_id, cause, command));
  }

  private inDoubtError(command: OrderCommand, cause: string, error?: unknown): InDoubtError {
    return new InDoubtError(
      `${command.event.type} ${command.eventId} of order ${command.orderId} is in doubt: ${cause}; it is not sent again`,
      {
        cause: error,
        metadata: { eventId: command.eventId, orderId: command.orderId },
      },
    );
  }

  private remember(eventId: string, outcome: PendingOutcome): void {
    this.pending.delete(eventId);
    this.pending.set(eventId, outcome);
    if (this.pending.size > MAX_PENDING) {
      const oldest = this.pending.keys().next();
      if (oldest.done !== true) this.pending.delete(oldest.value);
    }
  }
}

/** Delays between the tries of a record that must not be lost: about 6 s in all. */
const RECORD_RETRY_DELAYS_MS = [250, 500, 1000, 2000, 2000];

async function retryForAWhile<T>(work: () => Promise<T>): Promise<T> {
  for (const delay of RECORD_RETRY_DELAYS_MS) {
    try {
      return await work();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  return work();
}
