/**
 * The reads of `in-doubt list` and `in-doubt resolve`: the Payflow calls in doubt (an
 * attempt `in_doubt`) with what was sent and what the bridge knows. A read model serving
 * the operator: it holds no SQL, it composes the reads of the tables' repositories
 * (command_attempts, payments, installments, orders, dead_letters, webhook_inbox). The
 * verdicts (src/orders/in-doubt, the write side) read through it by their port,
 * InDoubtCalls, and write through those repositories. No webhook token, no key hash; of an
 * event's payload only counts and references are taken (in-doubt-list.view.ts).
 */
import type { Sql } from '../../database/database.js';
import { DeadLetterRepository } from '../../dead-letters/dead-letter.repository.js';
import {
  CommandAttemptRepository,
  type ClosedAttempt,
} from '../../orders/engine/attempts/command-attempt.repository.js';
import type {
  InDoubtCalls,
  InDoubtRow,
  ResolvedAttemptRow,
} from '../../orders/in-doubt/in-doubt-calls.port.js';
import { OrderRepository } from '../../orders/order.repository.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentRepository, type PaymentOverview } from '../../payments/payment.repository.js';
import {
  WebhookInboxRepository,
  type ReceivedWebhook,
} from '../../webhooks/inbox/webhook-inbox.repository.js';

function byId<T>(rows: readonly T[], id: (row: T) => string): Map<string, T> {
  return new Map(rows.map((row) => [id(row), row]));
}

export class InDoubtListQuery implements InDoubtCalls {
  constructor(
    private readonly payments = new PaymentRepository(),
    private readonly installments = new InstallmentRepository(),
    private readonly orders = new OrderRepository(),
    private readonly letters = new DeadLetterRepository(),
  ) {}

  /** Every call in doubt, the longest-waiting first. */
  async list(sql: Sql): Promise<InDoubtRow[]> {
    return this.describe(sql, await CommandAttemptRepository.listInDoubt(sql));
  }

  /**
   * Every call held for a late effect (PAYFLOW_LATE_EFFECT_WINDOW): found not applied while
   * its request may still land, so nothing is sent again until the window ends. The
   * soonest to end first.
   */
  async held(sql: Sql): Promise<InDoubtRow[]> {
    return this.describe(sql, await CommandAttemptRepository.listHeld(sql));
  }

  /** The order's calls in doubt, oldest first (normally one: the order is then blocked). */
  async ofOrder(sql: Sql, orderId: string): Promise<InDoubtRow[]> {
    return this.describe(sql, await CommandAttemptRepository.listInDoubt(sql, orderId));
  }

  /** The order's latest attempt that ended `resolved` (settled from outside), if any. */
  async lastResolved(sql: Sql, orderId: string): Promise<ResolvedAttemptRow | null> {
    const attempt = await CommandAttemptRepository.lastResolved(sql, orderId);
    if (attempt === null) return null;
    const payment = await this.paymentOf(sql, attempt.paymentId);
    return {
      attemptId: attempt.attemptId,
      eventId: attempt.eventId,
      command: attempt.command,
      paymentId: attempt.paymentId,
      payflowId: payment?.payflowId ?? null,
      paymentState: payment?.state ?? null,
      finishedAt: attempt.finishedAt,
    };
  }

  private async paymentOf(sql: Sql, paymentId: string | null): Promise<PaymentOverview | null> {
    if (paymentId === null) return null;
    const [payment] = await this.payments.byIds(sql, [paymentId]);
    return payment ?? null;
  }

  /** The attempts with what the bridge knows of their payments, orders and dead letters. */
  private async describe(sql: Sql, attempts: readonly ClosedAttempt[]): Promise<InDoubtRow[]> {
    if (attempts.length === 0) return [];
    const paymentIds = attempts.flatMap((attempt) => attempt.paymentId ?? []);
    const payments = byId(await this.payments.byIds(sql, paymentIds), (row) => row.id);
    const planned = await this.installments.liveCounts(sql, paymentIds);
    const orderIds = [...new Set(attempts.map((attempt) => attempt.orderId))];
    const orders = byId(await this.orders.byIds(sql, orderIds), (row) => row.orderId);
    const letters = await this.letters.ofEvents(sql, attempts);
    const webhooks = new Map<string, ReceivedWebhook[]>();
    for (const webhook of await WebhookInboxRepository.listForPayments(sql, paymentIds)) {
      webhooks.set(webhook.paymentId, [...(webhooks.get(webhook.paymentId) ?? []), webhook]);
    }
    return attempts.map((attempt, index): InDoubtRow => {
      const payment = attempt.paymentId === null ? undefined : payments.get(attempt.paymentId);
      const order = orders.get(attempt.orderId);
      const letter = letters[index];
      return {
        attemptId: attempt.attemptId,
        eventId: attempt.eventId,
        orderId: attempt.orderId,
        command: attempt.command,
        errorCode: attempt.errorCode,
        startedAt: attempt.startedAt,
        sentAt: attempt.sentAt,
        inDoubtSince: attempt.finishedAt,
        paymentId: attempt.paymentId,
        organizationId: payment?.organizationId ?? order?.organizationId ?? null,
        payflowId: payment?.payflowId ?? null,
        paymentState: payment?.state ?? null,
        currency: payment?.currency ?? null,
        totalGross: payment?.totalGross ?? null,
        plannedInstallments: payment === undefined ? 0 : (planned.get(payment.id) ?? 0),
        blocked: order !== undefined && order.blockedAt !== null,
        parked: letter?.parked ?? 0,
        letterValue: letter?.value ?? null,
        webhooks: attempt.paymentId === null ? [] : (webhooks.get(attempt.paymentId) ?? []),
        probeOutcome: attempt.probeOutcome,
        probeEvidence: attempt.probeEvidence,
        probedAt: attempt.probedAt,
        heldUntil: attempt.state === 'started' ? attempt.heldUntil : null,
      };
    });
  }
}
