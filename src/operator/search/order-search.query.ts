/**
 * The console's search: an order found by its id, its order number, a Payflow payment id
 * or the customer's number, and the last orders that failed (an event dead-lettered, a
 * call in doubt, a creation Payflow refused). A read model: it holds no SQL, it composes
 * the reads of the tables' repositories, each an index lookup (never a scan), so that it
 * answers in milliseconds on a million orders (bench/console-search.bench.ts). Indexes:
 * migrations/1764057600000-ConsoleSearch.ts.
 *
 * What a hit carries is what support needs to pick the right order: ids, numbers, the
 * organization, the customer number, each payment's ids and status, when the order's last
 * event took effect, and whether it is blocked or failed. No secret (webhook token, key
 * hash), no customer contact data.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Database } from '../../database/database.js';
import { CommandAttemptRepository } from '../../orders/engine/attempts/command-attempt.repository.js';
import { OrderRepository, type OrderMatch, type OrderRow } from '../../orders/order.repository.js';
import { ProcessedEventRepository } from '../../orders/processed-event.repository.js';
import { PaymentRepository, type PaymentOverview } from '../../payments/payment.repository.js';
import { amountView } from '../order-show/order-show.query.js';
import type { AmountView } from '../order-show/order-show.view.js';
import { sanitizeText } from '../masking/sanitize-text.js';

/** How a hit was found. */
export type SearchMatch = OrderMatch | 'payflow_id';

/** Why an order counts as failed. */
export type FailureKind = 'dead_lettered' | 'in_doubt' | 'creation_failed';

export interface OrderFailure {
  readonly kind: FailureKind;
  /** When it failed (ISO 8601). */
  readonly since: string;
  /** One line: the dead-letter reason and event, or the call in doubt. */
  readonly detail: string | null;
}

export interface PaymentHit {
  /** payflow-bridge's id of the payment. */
  readonly id: string;
  /** Payflow's payment id; null until Payflow created it. */
  readonly payflowId: string | null;
  /** creating, created, in_doubt, creation_failed, cancelled. */
  readonly state: string;
  /** pending, paid, failed, cancelled, unknown (null before Payflow answered). */
  readonly status: string | null;
  readonly providerStatus: string | null;
  readonly total: AmountView;
}

export interface OrderSearchHit {
  readonly orderId: string;
  readonly orderNumber: string | null;
  readonly organizationId: string | null;
  readonly customerNumber: string | null;
  /** open, cancelled, blocked, or unknown (known only from a Payflow payment id). */
  readonly state: string;
  /** The ways the search term matched (empty for `recentFailures`). */
  readonly matchedBy: readonly SearchMatch[];
  /** Oldest first; the last is the one commands act on. */
  readonly payments: readonly PaymentHit[];
  /** When the order's latest event took effect (ISO 8601), null when none did. */
  readonly lastEventAt: string | null;
  /** An event of the order is dead-lettered and its later events wait (replay unblocks). */
  readonly blocked: boolean;
  /** Blocked, or a payment's creation failed or is in doubt. */
  readonly failed: boolean;
  readonly failure: OrderFailure | null;
}

/** Longest search term taken (longer ones match nothing: no identifier is that long). */
export const MAX_TERM_LENGTH = 200;
/** Most hits one call returns. */
export const MAX_HITS = 100;

function clampLimit(limit: number): number {
  if (!Number.isFinite(limit)) return 20;
  return Math.min(MAX_HITS, Math.max(1, Math.trunc(limit)));
}

function paymentHit(payment: PaymentOverview): PaymentHit {
  return {
    id: payment.id,
    payflowId: payment.payflowId,
    state: payment.state,
    status: payment.status,
    providerStatus: payment.providerStatus,
    total: amountView(payment.totalGross, payment.currency),
  };
}

function isPaymentFailure(state: string): state is 'creation_failed' | 'in_doubt' {
  return state === 'creation_failed' || state === 'in_doubt';
}

/** What is wrong with the order now, by its row and payments (null: nothing). */
function currentFailure(
  order: OrderRow | undefined,
  payments: readonly PaymentOverview[],
): OrderFailure | null {
  if (order?.blockedAt) {
    const reason = order.blockedReason ?? '';
    return {
      kind: reason.startsWith('in_doubt') ? 'in_doubt' : 'dead_lettered',
      since: order.blockedAt.toISOString(),
      detail: order.blockedReason === null ? null : sanitizeText(order.blockedReason),
    };
  }
  const failed = payments.filter((payment) => isPaymentFailure(payment.state)).at(-1);
  if (failed === undefined) return null;
  return {
    kind: failed.state === 'in_doubt' ? 'in_doubt' : 'creation_failed',
    since: failed.updatedAt.toISOString(),
    detail: `payment ${failed.id} ${failed.state}`,
  };
}

@Injectable()
export class OrderSearchQuery {
  private readonly orders = new OrderRepository();
  private readonly payments = new PaymentRepository();
  private readonly processed = new ProcessedEventRepository();

  /** Reads on the pool (autocommit): each statement sees the latest commits. */
  constructor(@Inject(Database) private readonly database: Pick<Database, 'sql'>) {}

  /**
   * The orders `q` names, by any of the four identifiers (exact, trimmed): an order id,
   * an order number, a Payflow payment id, a customer number (a customer's newest orders
   * first). At most `limit` hits (1 to 100), an order id's match first.
   */
  async find(q: string, limit: number): Promise<OrderSearchHit[]> {
    const term = q.trim();
    if (term === '' || term.length > MAX_TERM_LENGTH) return [];
    const max = clampLimit(limit);
    const sql = this.database.sql;
    const [byOrder, byPayflow] = await Promise.all([
      this.orders.findIds(sql, term, max),
      this.payments.ordersOfPayflowIds(sql, [term]),
    ]);
    const matches = new Map<string, SearchMatch[]>();
    const add = (orderId: string, how: SearchMatch): void => {
      const ways = matches.get(orderId);
      if (ways === undefined) matches.set(orderId, [how]);
      else if (!ways.includes(how)) ways.push(how);
    };
    for (const row of byOrder.filter((match) => match.matchedBy === 'order_id')) {
      add(row.orderId, row.matchedBy);
    }
    for (const orderId of byPayflow.values()) add(orderId, 'payflow_id');
    for (const row of byOrder) add(row.orderId, row.matchedBy);
    const orderIds = [...matches.keys()].slice(0, max);
    return this.hits(orderIds, (orderId) => matches.get(orderId) ?? []);
  }

  /**
   * The last `limit` orders that failed, most recent first: blocked by a dead-lettered
   * event (in doubt among them), a Payflow call in doubt, a creation Payflow refused.
   * Replayed or resolved orders are no longer failed, so they are not listed.
   */
  async recentFailures(limit: number): Promise<OrderSearchHit[]> {
    const max = clampLimit(limit);
    const sql = this.database.sql;
    const [blocked, payments, inDoubt] = await Promise.all([
      this.orders.recentlyBlocked(sql, max),
      this.payments.recentlyFailed(sql, max),
      CommandAttemptRepository.recentInDoubt(sql, max),
    ]);
    const latest = new Map<string, number>();
    const seen = (orderId: string, at: Date | null): void => {
      const time = at?.getTime() ?? 0;
      if ((latest.get(orderId) ?? -1) < time) latest.set(orderId, time);
    };
    for (const order of blocked) seen(order.orderId, order.blockedAt);
    for (const payment of payments) seen(payment.orderId, payment.updatedAt);
    for (const attempt of inDoubt) seen(attempt.orderId, attempt.finishedAt ?? attempt.startedAt);
    const orderIds = [...latest.entries()]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, max)
      .map(([orderId]) => orderId);
    const attempts = new Map(inDoubt.map((attempt) => [attempt.orderId, attempt]));
    const hits = await this.hits(orderIds, () => []);
    return hits.map((hit) => {
      const attempt = attempts.get(hit.orderId);
      if (hit.failure !== null || attempt === undefined) return { ...hit, failed: true };
      // A follow-up in doubt whose dead letter is not written yet: the attempt says it.
      return {
        ...hit,
        failed: true,
        failure: {
          kind: 'in_doubt',
          since: (attempt.finishedAt ?? attempt.startedAt).toISOString(),
          detail: `${attempt.command} (event ${attempt.eventId}) in doubt`,
        },
      };
    });
  }

  /** The hits of these orders, in this order, each read by its indexes. */
  private async hits(
    orderIds: readonly string[],
    matchedBy: (orderId: string) => readonly SearchMatch[],
  ): Promise<OrderSearchHit[]> {
    if (orderIds.length === 0) return [];
    const sql = this.database.sql;
    const [orders, payments, lastEvents] = await Promise.all([
      this.orders.byIds(sql, orderIds),
      this.payments.listForOrders(sql, orderIds),
      this.processed.lastProcessedAt(sql, orderIds),
    ]);
    const orderById = new Map(orders.map((order) => [order.orderId, order]));
    const paymentsByOrder = new Map<string, PaymentOverview[]>();
    for (const payment of payments) {
      const list = paymentsByOrder.get(payment.orderId);
      if (list === undefined) paymentsByOrder.set(payment.orderId, [payment]);
      else list.push(payment);
    }
    return orderIds.map((orderId): OrderSearchHit => {
      const order = orderById.get(orderId);
      const ofOrder = paymentsByOrder.get(orderId) ?? [];
      const failure = currentFailure(order, ofOrder);
      const blocked =
        order !== undefined && (order.blockedAt !== null || order.state === 'blocked');
      return {
        orderId,
        orderNumber: order?.orderNumber ?? null,
        organizationId: order?.organizationId ?? ofOrder.at(-1)?.organizationId ?? null,
        customerNumber: order?.customerNumber ?? null,
        state: order?.state ?? 'unknown',
        matchedBy: matchedBy(orderId),
        payments: ofOrder.map(paymentHit),
        lastEventAt: lastEvents.get(orderId)?.toISOString() ?? null,
        blocked,
        failed: blocked || failure !== null,
        failure,
      };
    });
  }
}
