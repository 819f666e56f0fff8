/**
 * The begin step of the exactly-once protocol (protocol/attempt-protocol.ts), inside a
 * TransactionBatcher unit: the guard statement (one round trip for a fresh event, its
 * attempt and the rows it writes before its call), the protocol's decision
 * (protocol/attempt-decision.ts, then afterLeaseExpired for a stopped worker's sent
 * attempt), and the transition it chose. Several fresh events of a command that creates a
 * payment begin together, in one shared statement; in their calls' send hooks, that
 * statement records them started and sent at once (`sent`, the protocol's begin_sent).
 *
 * It follows the protocol's rule for units (a unit may run twice): decisions that wrote
 * nothing are returned, not thrown (a unit that throws after a statement makes the batcher
 * roll back and rerun its whole batch), and it logs nothing and leaves the runner's memory
 * alone: what is worth a log line (a takeover) is returned, for the runner to log once the
 * step is committed.
 */
import { Inject, Injectable } from '@nestjs/common';
import { StatementGroup } from '../../database/statement-group.js';
import type { BatchSql } from '../../database/transaction-batcher.js';
import type { Part } from '../../database/statement.js';
import {
  BlockedByEarlierFailureError,
  InDoubtError,
  type MappingFailedError,
} from '../../errors/dead-letter.errors.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import { OrderBusyError } from '../order.errors.js';
import type { OrderEventType } from '../../events/order-event.schema.js';
import { ORDERS_OPTIONS, type OrdersOptions } from '../orders.options.js';
import { NewPaymentWrites, type NewPayment } from '../new-payment/new-payment.js';
import { decide, type PendingOutcome } from './protocol/attempt-decision.js';
import { afterLeaseExpired } from './protocol/attempt-steps.js';
import {
  CommandAttemptRepository,
  FRESH_ROWS,
  type ManyGuardInput,
  type ProbedHold,
} from './attempts/command-attempt.repository.js';
import type { CommandSpec, Mapped } from './command-spec.js';
import { DUPLICATE, type CommandOutcome, type NotApplied } from './command-outcome.js';
import type { OrderCommand } from './order-command.js';

export type Begun =
  /** Nothing to call: the event was processed before, or cannot be handled now (why). */
  | { readonly kind: 'done'; readonly outcome: CommandOutcome }
  /** This worker holds the outcome of the started attempt: record it. */
  | { readonly kind: 'resume' }
  | {
      readonly kind: 'start';
      readonly attemptId: string;
      readonly paymentId: string | null;
      /** Set when the attempt of a stopped worker, never sent, was taken over. */
      readonly takenOverUnsent?: { readonly previousOwner: string | null };
      /** Set when the sent attempt of a stopped worker was taken over: its call is repeatable. */
      readonly takenOverRepeatable?: { readonly previousOwner: string | null };
    }
  /**
   * A stopped worker's attempt whose request left: read Payflow (outside this transaction)
   * before deciding whether it took effect, is sent again, or is in doubt.
   */
  | {
      readonly kind: 'probe';
      readonly attemptId: string;
      readonly paymentId: string | null;
      readonly previousOwner: string | null;
      /** When it was first held for a late effect (null: never), for the time to a decision. */
      readonly heldSince: Date | null;
    };

/** An event waiting for the shared begin statement of its command. */
export interface FreshItem {
  readonly command: OrderCommand;
  readonly newPayment: NewPayment;
}

@Injectable()
export class AttemptBegin {
  /** The begin_sent statements of the requests about to leave, one group per command. */
  private readonly sentGroups = new Map<
    OrderEventType,
    StatementGroup<FreshItem, Begun | undefined>
  >();

  constructor(
    private readonly attempts: CommandAttemptRepository,
    private readonly newPayments: NewPaymentWrites,
    private readonly outbox: OutboxWriter,
    @Inject(ORDERS_OPTIONS) private readonly options: OrdersOptions,
  ) {}

  /** One event's begin step. `mapped` is undefined exactly when `mappingError` is set. */
  async one<T extends OrderEventType, S, R>(
    tx: BatchSql,
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    mapped: Mapped<S> | undefined,
    mappingError: MappingFailedError | undefined,
    pending: PendingOutcome | null,
  ): Promise<Begun> {
    const { eventId, orderId } = command;
    const owner = this.owner(spec.type);
    const guard = await this.attempts.guard(
      tx,
      {
        ...owner,
        windowMs: this.options.lateEffectWindowMs,
        eventId,
        orderId,
        paymentId: mapped?.paymentId ?? null,
        record: mapped !== undefined,
      },
      mapped?.newPayment === undefined
        ? undefined
        : this.newPayments.gated([mapped.newPayment], FRESH_ROWS),
    );
    const decision = decide({
      guard,
      workerId: this.options.workerId,
      pending,
      mappingFailed: mappingError !== undefined,
    });
    switch (decision.kind) {
      case 'new':
        // The common case: a fresh event, its attempt (and rows) recorded by the guard.
        return {
          kind: 'start',
          attemptId: decision.attemptId,
          paymentId: mapped?.paymentId ?? null,
        };
      case 'duplicate':
        return { kind: 'done', outcome: DUPLICATE };
      case 'resume':
        return { kind: 'resume' };
      case 'blocked':
        return done({
          kind: 'blocked',
          error: new BlockedByEarlierFailureError(
            `order ${orderId} is blocked by an earlier dead-lettered event (${decision.reason ?? 'no reason recorded'})`,
            { metadata: { orderId, eventId } },
          ),
        });
      case 'busy':
        return done({
          kind: 'busy',
          error: new OrderBusyError(
            `event ${eventId} of order ${orderId} is being handled by worker ${decision.owner ?? '?'}`,
            { metadata: { orderId, eventId } },
          ),
        });
      case 'in_doubt':
        return done({ kind: 'in_doubt', error: inDoubtError(command, 'an earlier attempt') });
      case 'lease_expired': {
        const next = afterLeaseExpired({
          mapped: mapped !== undefined,
          repeatable: spec.repeatable,
          probes: spec.probe !== undefined,
        });
        if (next.kind === 'send_again') {
          if (mapped === undefined) throw new Error('a takeover without a mapping');
          const taken = await this.attempts.takeOverProbed(tx, decision.attemptId, owner, null);
          if (taken === null) return done({ kind: 'busy', error: busyError(command) });
          return {
            kind: 'start',
            attemptId: taken.attemptId,
            paymentId: mapped.paymentId,
            takenOverRepeatable: { previousOwner: guard.attempt?.owner ?? null },
          };
        }
        if (next.kind === 'probe') {
          if (mapped === undefined) throw new Error('a probe without a mapping');
          return {
            kind: 'probe',
            attemptId: decision.attemptId,
            paymentId: mapped.paymentId,
            previousOwner: guard.attempt?.owner ?? null,
            heldSince: guard.attempt?.heldSince ?? null,
          };
        }
        await this.markInDoubt(tx, command, spec, decision.attemptId, next.errorCode, next.cause);
        return done({ kind: 'in_doubt', error: inDoubtError(command, next.cause) });
      }
      case 'mapping_failed': {
        if (mappingError === undefined) throw new Error('mapping_failed without a mapping error');
        // Its status event once, whatever the redeliveries: only the delivery that records
        // the failure writes it.
        const first = await this.attempts.recordMappingFailure(
          tx,
          { eventId, orderId, command: spec.type, owner: owner.owner },
          mappingError.code,
        );
        if (first && spec.onFailure !== undefined) {
          const failure = { kind: 'mapping_failed', error: mappingError } as const;
          const events = await spec.onFailure(tx, failure, command);
          this.outbox.defer(tx, events, undefined, command.trace.headers());
        }
        return done({ kind: 'mapping_failed', error: mappingError });
      }
      case 'unknown_state':
        throw new Error(`attempt of event ${eventId} is in an unknown state (${decision.state})`);
      case 'retry': {
        if (mapped === undefined) throw new Error('a retry without a mapping');
        // A retry (or a race lost to another worker): the rows again, then the attempt.
        const paymentId =
          mapped.newPayment === undefined
            ? mapped.paymentId
            : await this.newPayments.retry(tx, mapped.newPayment);
        const attemptId = await this.attempts.takeOver(tx, {
          ...owner,
          eventId,
          orderId,
          paymentId,
        });
        // Thrown, not returned: the rows written for the retry must roll back with it
        // (the runner's begin step turns it into the `busy` outcome).
        if (attemptId === null) throw busyError(command);
        const started = { kind: 'start', attemptId, paymentId } as const;
        if (decision.reason !== 'unsent') return started;
        // Its worker died before the request left (e.g. behind the 429 gate): nothing
        // reached Payflow, so this delivery took the attempt over and sends it.
        return { ...started, takenOverUnsent: { previousOwner: guard.attempt?.owner ?? null } };
      }
    }
  }

  /**
   * The begin step of several fresh events of one command that creates a payment: one
   * statement records their attempts and rows. An event that turns out not to be fresh (a
   * duplicate, a retry, a blocked order), or a second event of the same order, gets
   * undefined and takes the one-event path.
   */
  many(
    tx: BatchSql,
    type: OrderEventType,
    items: readonly FreshItem[],
  ): Promise<(Begun | undefined)[]> {
    return this.fresh(type, items, (input, rows) => this.attempts.guardMany(tx, input, rows));
  }

  /**
   * Begin and sent in one step (the protocol's `begin_sent`) for a fresh event of a command
   * that creates a payment, whose request is about to leave: called from the call's send
   * hook, after the rate gate, with a connection held. The hooks of the requests ready
   * together share one autocommit statement (a StatementGroup per command), whose answer
   * releases them all in the same turn of the event loop. Undefined when the event is not
   * fresh; rejects when the statement failed (it may still have committed, when only its
   * answer was lost). Either way the request is not sent, and the event takes the path of
   * begin first.
   */
  sent(type: OrderEventType, item: FreshItem): Promise<Begun | undefined> {
    let group = this.sentGroups.get(type);
    if (group === undefined) {
      group = new StatementGroup<FreshItem, Begun | undefined>({
        run: (items) =>
          this.fresh(type, items, (input, rows) => this.attempts.beginSent(input, rows)),
      });
      this.sentGroups.set(type, group);
    }
    return group.add(item);
  }

  /** The shared begin statement of `items` (each order and event once), run by `record`. */
  private async fresh(
    type: OrderEventType,
    items: readonly FreshItem[],
    record: (input: ManyGuardInput, rows: Part) => Promise<Map<number, string>>,
  ): Promise<(Begun | undefined)[]> {
    const results: (Begun | undefined)[] = items.map(() => undefined);
    // One statement writes an order's row (and an event's attempt) once.
    const orders = new Set<string>();
    const events = new Set<string>();
    const chosen: { readonly index: number; readonly item: FreshItem }[] = [];
    items.forEach((item, index) => {
      const { orderId, eventId } = item.command;
      if (orders.has(orderId) || events.has(eventId)) return;
      orders.add(orderId);
      events.add(eventId);
      chosen.push({ index, item });
    });
    const started = await record(
      {
        ...this.owner(type),
        events: chosen.map(({ item }) => ({
          eventId: item.command.eventId,
          orderId: item.command.orderId,
          paymentId: item.newPayment.payment.id,
        })),
      },
      this.newPayments.gated(
        chosen.map(({ item }) => item.newPayment),
        FRESH_ROWS,
      ),
    );
    chosen.forEach(({ index, item }, position) => {
      const attemptId = started.get(position + 1);
      if (attemptId !== undefined) {
        results[index] = { kind: 'start', attemptId, paymentId: item.newPayment.payment.id };
      }
    });
    return results;
  }

  /** The started attempt is in doubt (once); the command records what that means for it. */
  async markInDoubt<T extends OrderEventType, S, R>(
    tx: BatchSql,
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    attemptId: string,
    errorCode: string,
    cause: string,
    probed?: ProbedHold,
  ): Promise<boolean> {
    const marked = await this.attempts.markInDoubt(tx, attemptId, errorCode, probed);
    if (marked === undefined) return false;
    if (spec.onFailure === undefined) return true;
    const failure = { kind: 'in_doubt', paymentId: marked.paymentId, cause } as const;
    const events = await spec.onFailure(tx, failure, command);
    this.outbox.defer(tx, events, undefined, command.trace.headers());
    return true;
  }

  private owner(type: OrderEventType): { command: string; owner: string; leaseMs: number } {
    return { command: type, owner: this.options.workerId, leaseMs: this.options.attemptLeaseMs };
  }
}

function done(outcome: NotApplied): Begun {
  return { kind: 'done', outcome };
}

/** Another worker holds (or took) the event's attempt. */
export function busyError(command: OrderCommand): OrderBusyError {
  return new OrderBusyError(
    `event ${command.eventId} of order ${command.orderId} is being handled elsewhere`,
    { metadata: { orderId: command.orderId, eventId: command.eventId } },
  );
}

export function inDoubtError(command: OrderCommand, cause: string, error?: unknown): InDoubtError {
  return new InDoubtError(
    `${command.event.type} ${command.eventId} of order ${command.orderId} is in doubt: ${cause}; it is not sent again`,
    { cause: error, metadata: { eventId: command.eventId, orderId: command.orderId } },
  );
}
