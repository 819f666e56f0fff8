/**
 * The sent step of the exactly-once protocol (protocol/attempt-protocol.ts): the Payflow
 * call of a started attempt, whose send hook commits `sent_at` just before the request
 * leaves (`mark_sent`); and, for a fresh event of a command that creates a payment, the
 * call made first, whose send hook records the attempt started and sent in one step
 * (`begin_sent`, AttemptBegin.sent), once the rate gate is passed and a connection is held.
 * Either way a request whose hook failed never left the process.
 */
import type { OrderEventType } from '../../events/order-event.schema.js';
import { StatementGroup } from '../../database/statement-group.js';
import type { OrdersOptions } from '../orders.options.js';
import type { AttemptBegin, Begun, FreshItem } from './attempt-begin.js';
import { AttemptNotBegunError, AttemptNotOwnedError } from './attempt.errors.js';
import type { CommandAttemptRepository } from './attempts/command-attempt.repository.js';
import type { CommandSpec } from './command-spec.js';
import type { OrderCommand } from './order-command.js';

/** What a call made before its begin step came to. */
export type FreshCall<R> =
  /**
   * Nothing was begun here, so no request left: the event takes the path of begin first.
   * `hookRan` false: the call failed before its hook (the event is still fresh).
   * `unheard`: the hook's statement failed, and may have committed an attempt (started and
   * sent) whose answer was lost: the request did not leave, which only this worker knows.
   */
  | { readonly kind: 'not_begun'; readonly hookRan: boolean; readonly unheard: boolean }
  /** The hook began the attempt (started and sent); the call then ended so. */
  | {
      readonly kind: 'begun';
      readonly attemptId: string;
      readonly paymentId: string | null;
      readonly outcome: { ok: true; result: R } | { ok: false; error: unknown };
    };

export class AttemptSend {
  /** The send marks of the requests about to leave, one autocommit statement at a time. */
  private readonly sendMarks = new StatementGroup<string, boolean>({
    run: async (attemptIds) => {
      const marked = await this.attempts.markSent(attemptIds, this.options.workerId);
      return attemptIds.map((id) => marked.has(id));
    },
  });

  constructor(
    private readonly attempts: CommandAttemptRepository,
    private readonly begin: AttemptBegin,
    private readonly options: OrdersOptions,
  ) {}

  /** The call of a started attempt, `sent_at` committed by its send hook. */
  call<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    state: S,
    attemptId: string,
  ): Promise<R> {
    return this.callWith(command, spec, state, () => this.markSent(attemptId));
  }

  /**
   * The call of a fresh event of a command that creates a payment, before any begin step:
   * its send hook begins the attempt, started and sent in one step. `not_begun` when the
   * event is not fresh, the shared statement failed, or the call failed before its hook
   * ran. A client that sends again (a 401 refresh) runs the hook again: a send mark.
   */
  async callFresh<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    state: S,
    item: FreshItem,
  ): Promise<FreshCall<R>> {
    let beginning: Promise<Begun | undefined | 'unheard'> | undefined;
    const begin = (): Promise<Begun | undefined | 'unheard'> =>
      this.begin.sent(spec.type, item).catch(() => 'unheard' as const);
    const onSend = async (): Promise<void> => {
      const again = beginning !== undefined;
      const begun = await (beginning ??= begin());
      if (begun === 'unheard' || begun?.kind !== 'start') {
        throw new AttemptNotBegunError(
          `event ${command.eventId} of order ${command.orderId} did not begin here; its request is not sent`,
          { metadata: { eventId: command.eventId, orderId: command.orderId } },
        );
      }
      if (again) await this.markSent(begun.attemptId);
    };
    let outcome: { ok: true; result: R } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, result: await this.callWith(command, spec, state, onSend) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // A deadline may end the call while its hook's statement runs: that answer decides.
    const begun = beginning === undefined ? undefined : await beginning;
    if (begun === 'unheard' || begun?.kind !== 'start') {
      if (outcome.ok) throw new Error(`a ${spec.type} request left without its send hook`);
      return { kind: 'not_begun', hookRan: beginning !== undefined, unheard: begun === 'unheard' };
    }
    return { kind: 'begun', attemptId: begun.attemptId, paymentId: begun.paymentId, outcome };
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

  private callWith<T extends OrderEventType, S, R>(
    command: OrderCommand<T>,
    spec: CommandSpec<T, S, R>,
    state: S,
    onSend: () => Promise<void>,
  ): Promise<R> {
    return spec.call(state, {
      signal: AbortSignal.timeout(this.options.callDeadlineMs),
      onSend,
      trace: command.trace.headers(),
    });
  }
}
