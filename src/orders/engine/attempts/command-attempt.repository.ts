/**
 * The attempt ledger. This folder (src/orders/engine/attempts/) is the only owner of the
 * `command_attempts` table's SQL: no file outside it holds a statement on that table, and
 * this class is how the rest of the service reaches them. Every Payflow call of a command
 * is recorded before it is made (`started`, with this worker's lease), marked `sent_at`
 * just before its request leaves, and ends `succeeded`, `failed`, `in_doubt` or `resolved`.
 * Every write is guarded by state, owner and lease in SQL: each is a transition of the
 * exactly-once protocol (protocol/attempt-protocol.ts, TRANSITIONS names the statement),
 * its WHERE is that transition's condition, and test/orders/attempt-protocol-oracle.test.ts
 * runs every one against attempts in every state and compares with the table.
 *
 * The statements, by concern:
 * - attempt-begin.statements.ts: the guard statements that begin an attempt, and takeOver;
 * - attempt-transition.statements.ts: the transitions of a begun attempt (sent, complete,
 *   fail, hold, in doubt, the writes after a probe, resolve, not taken);
 * - attempt-records.ts: attempts recorded without a call (discard, a mapping failure);
 * - attempt-reads.ts: the operator's reads (static, on any `Sql`);
 * - attempt-sql.ts: the lease, the late-effect window and the hold condition they share.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { Sql } from '../../../database/database.js';
import { TransactionBatcher } from '../../../database/transaction-batcher.js';
import type { Part } from '../../../database/statement.js';
import { OrderRepository } from '../../order.repository.js';
import { ProcessedEventRepository } from '../../processed-event.repository.js';
import type { GuardRow } from '../protocol/attempt-decision.js';
import * as begin from './attempt-begin.statements.js';
import type { GuardInput, GuardTables, ManyGuardInput } from './attempt-begin.statements.js';
import * as reads from './attempt-reads.js';
import type { ClosedAttempt } from './attempt-reads.js';
import * as records from './attempt-records.js';
import type { AttemptOwner, ProbedHold } from './attempt-sql.js';
import * as moves from './attempt-transition.statements.js';
import type {
  FinishedAttempt,
  HeldAttempt,
  NotTaken,
  TakeOverProbe,
  TakenOver,
} from './attempt-transition.statements.js';

export { FRESH_ROWS, type GuardInput, type ManyGuardInput } from './attempt-begin.statements.js';
export type { ClosedAttempt } from './attempt-reads.js';
export { type AttemptOwner, type ProbeEvidence, type ProbedHold } from './attempt-sql.js';
export type { FinishedAttempt } from './attempt-transition.statements.js';

@Injectable()
export class CommandAttemptRepository {
  private readonly tables: GuardTables;

  constructor(
    orders: OrderRepository,
    private readonly processed: ProcessedEventRepository,
    @Inject(TransactionBatcher) private readonly batcher: TransactionBatcher,
  ) {
    this.tables = { orders, processed };
  }

  // The operator's reads, static: they need only the `Sql` they are given (attempt-reads.ts).

  /** Every attempt in doubt (of the order `orderId` only), the longest-waiting first. */
  static listInDoubt(sql: Sql, orderId?: string): Promise<ClosedAttempt[]> {
    return reads.listInDoubt(sql, orderId);
  }

  /** The latest `limit` attempts in doubt, the latest first. */
  static recentInDoubt(sql: Sql, limit: number): Promise<ClosedAttempt[]> {
    return reads.recentInDoubt(sql, limit);
  }

  /** Every attempt held for a late effect (of the order `orderId` only), soonest to end first. */
  static listHeld(sql: Sql, orderId?: string): Promise<ClosedAttempt[]> {
    return reads.listHeld(sql, orderId);
  }

  /** The order's attempts that a probe decided (or found unreadable), oldest first. */
  static listProbed(sql: Sql, orderId: string): Promise<ClosedAttempt[]> {
    return reads.listProbed(sql, orderId);
  }

  /** Every attempt of the order, oldest first. */
  static listForOrder(sql: Sql, orderId: string): Promise<ClosedAttempt[]> {
    return reads.listForOrder(sql, orderId);
  }

  /** The order's latest attempt that ended `resolved`, if any. */
  static lastResolved(sql: Sql, orderId: string): Promise<ClosedAttempt | null> {
    return reads.lastResolved(sql, orderId);
  }

  /** `discard`, in the caller's own transaction (attempt-records.ts). False when refused; true again when discarded before. */
  static discard(
    sql: Sql,
    event: { readonly eventId: string; readonly orderId: string; readonly command: string },
  ): Promise<boolean> {
    return records.discard(sql, event);
  }

  // Begin (attempt-begin.statements.ts).

  /** The guard of one event, recording its attempt when it is fresh and `record`. */
  guard(tx: Sql, input: GuardInput, fresh?: Part): Promise<GuardRow> {
    return begin.guard(this.tables, tx, input, fresh);
  }

  /** The guard of several events: the fresh ones' attempt ids by 1-based position. */
  async guardMany(tx: Sql, input: ManyGuardInput, fresh: Part): Promise<Map<number, string>> {
    const { text, params } = begin.guardManyStatement(this.tables, input, fresh, false);
    return begin.startedByPosition(await tx.query(text, params));
  }

  /**
   * guardMany for events whose requests are about to leave (called from their send hooks,
   * with the rate gate passed and a connection held): the fresh ones' attempts are recorded
   * `started` and sent at once (`begin_sent`), with their `fresh` writes, in one autocommit
   * statement outside any batch (like markSent).
   */
  async beginSent(input: ManyGuardInput, fresh: Part): Promise<Map<number, string>> {
    const { text, params } = begin.guardManyStatement(this.tables, input, fresh, true);
    return begin.startedByPosition(await this.batcher.runAlone(text, params));
  }

  /** The event's mapping failed: recorded once as `failed`; true when this recorded it. */
  recordMappingFailure(
    tx: Sql,
    input: Parameters<typeof records.recordMappingFailure>[1],
    errorCode: string,
  ): Promise<boolean> {
    return records.recordMappingFailure(tx, input, errorCode);
  }

  /** `retry_failed`, `restart_own`, `take_over_unsent`; null when another worker holds it, or it is held. */
  takeOver(tx: Sql, input: Omit<GuardInput, 'record' | 'windowMs'>): Promise<string | null> {
    return begin.takeOver(tx, input);
  }

  // The transitions of a begun attempt (attempt-transition.statements.ts).

  /** `mark_sent`, autocommit outside any batch; the ids marked. */
  markSent(attemptIds: readonly string[], owner: string): Promise<Set<string>> {
    return moves.markSent(this.batcher, attemptIds, owner);
  }

  /** `complete`, `complete_late`, with the events processed; how many it finished. */
  finish(tx: Sql, rows: readonly FinishedAttempt[]): Promise<number> {
    return moves.finish(this.processed, tx, rows);
  }

  /** `fail`, only while `owner` owns it and it is not held. */
  markFailed(tx: Sql, attemptId: string, errorCode: string, owner: string): Promise<void> {
    return moves.markFailed(tx, attemptId, errorCode, owner);
  }

  /** `fail_probed`, once the late-effect window ran out; false otherwise. */
  failProbed(
    tx: Sql,
    attemptId: string,
    errorCode: string,
    probed: ProbedHold,
    windowMs: number,
  ): Promise<boolean> {
    return moves.failProbed(tx, attemptId, errorCode, probed, windowMs);
  }

  /** `hold`, while the late-effect window runs; null otherwise. */
  holdForLateEffect(
    tx: Sql,
    attemptId: string,
    probed: ProbedHold,
    windowMs: number,
  ): Promise<HeldAttempt | null> {
    return moves.holdForLateEffect(tx, attemptId, probed, windowMs);
  }

  /** `in_doubt` (with a probe: `in_doubt_probed_*`); its payment id when this marked it. */
  markInDoubt(
    tx: Sql,
    attemptId: string,
    errorCode: string,
    probed?: ProbedHold,
  ): Promise<{ readonly paymentId: string | null } | undefined> {
    return moves.markInDoubt(tx, attemptId, errorCode, probed);
  }

  /** The claim of `complete_probed_*`, before `finish`; false when busy. */
  claimProbed(tx: Sql, attemptId: string, probed: ProbedHold): Promise<boolean> {
    return moves.claimProbed(tx, attemptId, probed);
  }

  /** `take_over_sent` (`probe` null), `take_over_probed`; null when refused. */
  takeOverProbed(
    tx: Sql,
    attemptId: string,
    owner: AttemptOwner,
    probe: TakeOverProbe | null,
  ): Promise<TakenOver | null> {
    return moves.takeOverProbed(tx, attemptId, owner, probe);
  }

  /** Whether a started attempt about the payment outlived its lease. */
  hasAbandoned(tx: Sql, paymentId: string): Promise<boolean> {
    return moves.hasAbandoned(tx, paymentId);
  }

  /** `resolve`: the payment's open attempts are settled from outside. */
  resolveForPayment(tx: Sql, paymentId: string): Promise<void> {
    return moves.resolveForPayment(tx, paymentId);
  }

  /** `not_taken`, once its request can no longer land (the late-effect window ran out). */
  markNotTaken(tx: Sql, attemptId: string, errorCode: string, windowMs: number): Promise<NotTaken> {
    return moves.markNotTaken(tx, attemptId, errorCode, windowMs);
  }
}
