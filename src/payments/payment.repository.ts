/**
 * The only owner of the `payments` table's SQL. Rows come back parsed (zod), never cast.
 * Writes that must share a round trip with other tables' writes are offered as statement
 * parts (see statement.ts); the rest run on the `Sql` they are given (a transaction, or
 * the pool for autocommit reads).
 */
import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import {
  idRow,
  inboxRow,
  latestRow,
  nowRow,
  openRow,
  overviewRow,
  payflowIdRow,
  payflowOrderRow,
  personalDataRow,
  settledRow,
  syncRow,
  tokenRow,
  type CreatedAtPayflow,
  type LatestPayment,
  type NewPaymentRow,
  type OpenPayment,
  type PaymentPersonalData,
  type PaymentOverview,
  type SettledPayment,
  type SyncedStatus,
  type InboxPayment,
  type SyncPayment,
  type TokenRow,
} from './payment.rows.js';
import { settlementPaymentRow, type SettlementPayment } from './payment.rows.js';
import { STATE_PREDECESSORS } from './payment.aggregate.js';
import { jsonOrNull } from './payment-trace.js';
import { render, type Bind, type Part } from '../database/statement.js';

export type * from './payment.rows.js';

/** Name of the relation `newPaymentCtes` defines: its rows' columns, for other tables' parts. */
export const NEW_PAYMENTS = 'new_payments';

/** `('a', 'b')`: the states `state` may be entered from (the aggregate's rule, as SQL). */
function enteredFrom(state: keyof typeof STATE_PREDECESSORS): string {
  return `(${STATE_PREDECESSORS[state].map((from) => `'${from}'`).join(', ')})`;
}

const OVERVIEW = `
  SELECT id::text AS id, order_id AS "orderId", payflow_id AS "payflowId",
         organization_id AS "organizationId", state, provider_status AS "providerStatus", status,
         payment_link AS "paymentLink", payment_method_id AS "paymentMethodId", currency,
         payment_ref AS "paymentRef", external_ref AS "externalRef",
         total_gross_minor::text AS "totalGross", total_net_minor::text AS "totalNet",
         created_at AS "createdAt", updated_at AS "updatedAt", last_polled_at AS "lastPolledAt"
    FROM payments`;

/**
 * The order's latest payment that Payflow created, and the payments whose creation is
 * settled (created or cancelled): what every command after payment_requested acts on.
 */
const LATEST_CREATED = `
  SELECT id, order_id, payflow_id, currency, organization_id, state, provider_status,
         total_gross_minor::text AS total_gross_minor
    FROM payments
   WHERE order_id = $1 AND payflow_id IS NOT NULL AND state IN ('created', 'cancelled')
   ORDER BY created_at DESC, id DESC
   LIMIT 1`;

@Injectable()
export class PaymentRepository {
  /** The database's clock (a snapshot is dated by it, the same clock as status_checked_at). */
  async databaseNow(sql: Sql): Promise<Date> {
    const [row] = await sql.query('SELECT clock_timestamp() AS now');
    if (row === undefined) throw new Error('no database time');
    return nowRow.parse(row).now;
  }

  async latestCreated(sql: Sql, orderId: string): Promise<LatestPayment | null> {
    const [row] = await sql.query(LATEST_CREATED, [orderId]);
    return row === undefined ? null : latestRow.parse(row);
  }

  /** The payment an event created earlier (its retry reuses the row). */
  async idForEvent(sql: Sql, eventId: string): Promise<string | null> {
    const [row] = await sql.query(`SELECT id FROM payments WHERE event_id = $1::uuid`, [eventId]);
    return row === undefined ? null : idRow.parse(row).id;
  }

  /**
   * CTEs that create payments in state `creating`: `new_payments` (NEW_PAYMENTS: the rows,
   * as columns n, id, event_id, order_id, organization_id, order_number, customer_number,
   * currency, gross_minor, net_minor, webhook_token, api_key_hash, payment_method_id,
   * payment_ref, external_ref), then their
   * insert. The same builder serves a fresh event, a burst of fresh events and a retry:
   * `gate` names a relation whose column `n` lists the rows to write (those whose attempt
   * was recorded), or null for all; `reuse` lets a retry take over its earlier row (same
   * event), brought back to `creating` without Payflow's ids.
   */
  newPaymentCtes(rows: readonly NewPaymentRow[], gate: string | null, reuse: boolean): Part {
    return (bind: Bind) => {
      const column = <K extends keyof NewPaymentRow>(key: K, type: string): string =>
        `${bind(rows.map((row) => row[key]))}::${type}[]`;
      const traces = `${bind(rows.map((row) => jsonOrNull(row.traceHeaders)))}::jsonb[]`;
      const conflict = reuse
        ? `ON CONFLICT (event_id) DO UPDATE
             SET state = 'creating', organization_id = EXCLUDED.organization_id,
                 currency = EXCLUDED.currency, total_gross_minor = EXCLUDED.total_gross_minor,
                 total_net_minor = EXCLUDED.total_net_minor, webhook_token = EXCLUDED.webhook_token,
                 api_key_hash = EXCLUDED.api_key_hash, payment_method_id = EXCLUDED.payment_method_id,
                 payment_ref = EXCLUDED.payment_ref, external_ref = EXCLUDED.external_ref,
                 trace_headers = EXCLUDED.trace_headers, payflow_id = NULL, payment_link = NULL, updated_at = now()`
        : '';
      return `
  ${NEW_PAYMENTS} AS (
    SELECT d.*
      FROM unnest(${column('n', 'int')}, ${column('id', 'uuid')}, ${column('eventId', 'uuid')},
                  ${column('orderId', 'text')}, ${column('organizationId', 'text')},
                  ${column('orderNumber', 'text')}, ${column('customerNumber', 'text')},
                  ${column('currency', 'text')},
                  ${column('totalGrossMinor', 'bigint')}, ${column('totalNetMinor', 'bigint')},
                  ${column('webhookToken', 'text')}, ${column('apiKeyHash', 'bytea')},
                  ${column('paymentMethodId', 'text')}, ${column('paymentRef', 'text')},
                  ${column('externalRef', 'text')}, ${traces})
           AS d (n, id, event_id, order_id, organization_id, order_number, customer_number, currency,
                 gross_minor, net_minor, webhook_token, api_key_hash, payment_method_id,
                 payment_ref, external_ref, trace_headers)
     ${gate === null ? '' : `WHERE d.n IN (SELECT n FROM ${gate})`}),
  new_payment_rows AS (
    INSERT INTO payments (id, order_id, organization_id, event_id, state, currency,
                          total_gross_minor, total_net_minor, webhook_token, api_key_hash,
                          payment_method_id, payment_ref, external_ref, trace_headers)
    SELECT id, order_id, organization_id, event_id, 'creating', currency, gross_minor,
           net_minor, webhook_token, api_key_hash, payment_method_id, payment_ref, external_ref,
           trace_headers
      FROM ${NEW_PAYMENTS} ORDER BY n
    ${conflict})`;
    };
  }

  /** Runs `newPaymentCtes` (ungated) with other tables' CTEs that read `new_payments`. */
  async create(
    tx: Sql,
    rows: readonly NewPaymentRow[],
    reuse: boolean,
    alsoWith: readonly Part[],
  ): Promise<void> {
    const { text, params } = render((bind) => {
      const ctes = [this.newPaymentCtes(rows, null, reuse), ...alsoWith].map((part) => part(bind));
      return `WITH ${ctes.join(',\n')}\n  SELECT n FROM ${NEW_PAYMENTS}`;
    });
    await tx.query(text, params);
  }

  /** The payments of a batch `created` with Payflow's ids and links (one statement). */
  markCreated(rows: readonly CreatedAtPayflow[]): Part {
    return (bind) => `
    UPDATE payments p
       SET payflow_id = x.payflow_id, state = 'created', payment_link = x.link,
           status = COALESCE(p.status, 'pending'), updated_at = now()
      FROM unnest(${bind(rows.map((row) => row.paymentId))}::uuid[],
                  ${bind(rows.map((row) => row.payflowId))}::text[],
                  ${bind(rows.map((row) => row.paymentLink))}::text[]) AS x (id, payflow_id, link)
     WHERE p.id = x.id AND p.state IN ${enteredFrom('created')}`;
  }

  /** Payflow refused the creation: the payment ends `creation_failed`. */
  async markCreationFailed(tx: Sql, paymentId: string): Promise<void> {
    await tx.execute(
      `UPDATE payments SET state = 'creation_failed', updated_at = now()
        WHERE id = $1::uuid AND state IN ${enteredFrom('creation_failed')}`,
      [paymentId],
    );
  }

  /** The creation call may or may not have reached Payflow. */
  async markInDoubt(tx: Sql, paymentId: string): Promise<void> {
    await tx.execute(
      `UPDATE payments SET state = 'in_doubt', updated_at = now()
        WHERE id = $1::uuid AND state IN ${enteredFrom('in_doubt')}`,
      [paymentId],
    );
  }

  /**
   * Settles a payment whose creation is in doubt (or, with `creatingAbandoned`, still
   * `creating` although its attempt's lease ran out) as `created` with Payflow's id.
   * Null when it is not such a payment.
   */
  async settleInDoubt(
    tx: Sql,
    paymentId: string,
    payflowId: string,
    paymentLink: string | null,
    creatingAbandoned: boolean,
  ): Promise<SettledPayment | null> {
    const [row] = await tx.query(
      `UPDATE payments p
          SET payflow_id = $2, state = 'created', payment_link = COALESCE($3, p.payment_link),
              status = COALESCE(p.status, 'pending'), updated_at = now()
        WHERE p.id = $1::uuid AND (p.state = 'in_doubt' OR (p.state = 'creating' AND $4::boolean))
       RETURNING order_id, organization_id, currency, total_gross_minor::text, total_net_minor::text,
                 payment_link, payment_method_id, event_id::text, trace_headers`,
      [paymentId, payflowId, paymentLink, creatingAbandoned],
    );
    return row === undefined ? null : settledRow.parse(row);
  }

  /** Payflow cancelled the payment (order.cancelled). */
  markCancelled(paymentId: string, providerStatus: string, status: string): Part {
    return (bind) => `
    UPDATE payments SET state = 'cancelled', provider_status = ${bind(providerStatus)},
           status = ${bind(status)}, updated_at = now()
     WHERE id = ${bind(paymentId)}::uuid`;
  }

  /** A status Payflow answered to a command (e.g. manual-paid). */
  setStatus(paymentId: string, providerStatus: string, status: string): Part {
    return (bind) => `
    UPDATE payments SET provider_status = ${bind(providerStatus)}, status = ${bind(status)},
           updated_at = now()
     WHERE id = ${bind(paymentId)}::uuid`;
  }

  /**
   * The total changed with its installments: `deltaMinor` added (negative: removed). Only
   * the payment aggregate decides the delta (PaymentAggregate, payment-aggregate.store.ts).
   */
  addToTotal(paymentId: string, deltaMinor: bigint): Part {
    return (bind) => `
    UPDATE payments SET total_gross_minor = total_gross_minor + ${bind(deltaMinor.toString())}::bigint,
           updated_at = now()
     WHERE id = ${bind(paymentId)}::uuid`;
  }

  async setPaymentMethod(tx: Sql, paymentId: string, paymentMethodId: string): Promise<void> {
    await tx.execute(
      `UPDATE payments SET payment_method_id = $2, updated_at = now() WHERE id = $1::uuid`,
      [paymentId, paymentMethodId],
    );
  }

  /** The payment of a webhook inbox group, or null. */
  async forInbox(sql: Sql, paymentId: string): Promise<InboxPayment | null> {
    const [row] = await sql.query(
      `SELECT id::text, order_id AS "orderId", organization_id AS "organizationId",
              payflow_id AS "payflowId", state, currency,
              total_gross_minor::text AS "totalGrossMinor", trace_headers AS "traceHeaders"
         FROM payments WHERE id = $1::uuid`,
      [paymentId],
    );
    return row === undefined ? null : inboxRow.parse(row);
  }

  /** The order's payments, oldest first. */
  listForOrder(sql: Sql, orderId: string): Promise<PaymentOverview[]> {
    return queryRows(sql, overviewRow, `${OVERVIEW} WHERE order_id = $1 ORDER BY created_at, id`, [
      orderId,
    ]);
  }

  /** The payments of these orders, each order's oldest first (payments_order_id_idx). */
  listForOrders(sql: Sql, orderIds: readonly string[]): Promise<PaymentOverview[]> {
    return queryRows(
      sql,
      overviewRow,
      `${OVERVIEW} WHERE order_id = ANY($1::text[]) ORDER BY order_id, created_at, id`,
      [orderIds],
    );
  }

  /**
   * The payments whose creation failed or is in doubt, the latest change first
   * (payments_failed_idx, which holds only those).
   */
  recentlyFailed(sql: Sql, limit: number): Promise<PaymentOverview[]> {
    return queryRows(
      sql,
      overviewRow,
      `${OVERVIEW} WHERE state IN ('creation_failed', 'in_doubt') ORDER BY updated_at DESC LIMIT $1`,
      [limit],
    );
  }

  /** The payments with these ids (those that exist), in no particular order. */
  byIds(sql: Sql, paymentIds: readonly string[]): Promise<PaymentOverview[]> {
    return queryRows(sql, overviewRow, `${OVERVIEW} WHERE id = ANY($1::uuid[])`, [paymentIds]);
  }

  /**
   * Up to `limit` payments after id `after` (in id order) that have a Payflow id, are
   * created or cancelled, and whose provider status is not one of `finalStatuses`.
   */
  openPage(
    sql: Sql,
    finalStatuses: readonly string[],
    after: string,
    limit: number,
  ): Promise<OpenPayment[]> {
    return queryRows(
      sql,
      openRow,
      `SELECT id::text AS id, order_id AS "orderId", organization_id AS "organizationId",
              payflow_id AS "payflowId", currency
         FROM payments
        WHERE payflow_id IS NOT NULL AND state IN ('created', 'cancelled')
          AND (provider_status IS NULL OR provider_status <> ALL($1::text[]))
          AND id > $2::uuid
        ORDER BY id LIMIT $3`,
      [finalStatuses, after, limit],
    );
  }

  /** Whether another payment of the bridge has this Payflow id. */
  async payflowIdTakenElsewhere(sql: Sql, payflowId: string, paymentId: string): Promise<boolean> {
    const rows = await sql.query(
      'SELECT id::text FROM payments WHERE payflow_id = $1 AND id <> $2::uuid',
      [payflowId, paymentId],
    );
    return rows.length > 0;
  }

  async payflowIdOf(sql: Sql, paymentId: string): Promise<string | null> {
    const [row] = await sql.query('SELECT payflow_id FROM payments WHERE id = $1::uuid', [
      paymentId,
    ]);
    return row === undefined ? null : payflowIdRow.parse(row).payflow_id;
  }

  /** Which of these Payflow payment ids are payments the bridge created: payflow id → order id. */
  async ordersOfPayflowIds(sql: Sql, payflowIds: readonly string[]): Promise<Map<string, string>> {
    if (payflowIds.length === 0) return new Map();
    const rows = await queryRows(
      sql,
      payflowOrderRow,
      `SELECT payflow_id AS "payflowId", order_id AS "orderId" FROM payments
        WHERE payflow_id = ANY($1::text[])`,
      [payflowIds],
    );
    return new Map(rows.map((row) => [row.payflowId, row.orderId]));
  }

  /** Locks the payment for the status sync (FOR UPDATE); `fresh`: fetched after its last check. */
  async lockForSync(tx: Sql, paymentId: string, fetchedAt: Date): Promise<SyncPayment | null> {
    const [row] = await tx.query(
      `SELECT id::text, order_id AS "orderId", organization_id AS "organizationId",
              payflow_id AS "payflowId", state, provider_status AS "providerStatus", status,
              (status_checked_at IS NULL OR status_checked_at < $2) AS fresh
         FROM payments WHERE id = $1::uuid FOR UPDATE`,
      [paymentId, fetchedAt],
    );
    return row === undefined ? null : syncRow.parse(row);
  }

  /** Records a sync: when it was checked, and the status when it changed. */
  async recordSync(tx: Sql, synced: SyncedStatus): Promise<void> {
    await tx.execute(
      `UPDATE payments
          SET status_checked_at = $2,
              provider_status = COALESCE($3, provider_status),
              status = COALESCE($4, status),
              last_polled_at = CASE WHEN $5 THEN clock_timestamp() ELSE last_polled_at END,
              updated_at = now()
        WHERE id = $1::uuid`,
      [synced.paymentId, synced.checkedAt, synced.providerStatus, synced.status, synced.polled],
    );
  }

  /** The payments holding these webhook tokens. */
  async byWebhookTokens(sql: Sql, tokens: readonly string[]): Promise<TokenRow[]> {
    const rows = await sql.query(
      `SELECT webhook_token, id::text AS id, api_key_hash, trace_headers FROM payments
        WHERE webhook_token = ANY($1::text[])`,
      [tokens],
    );
    return rows.map((row) => tokenRow.parse(row));
  }

  /**
   * A person found that the in-doubt creation never reached Payflow: the payment is back
   * in `creating`, where a call that never left leaves it, and the event's next delivery
   * reuses the row. False when the payment was not in doubt.
   */
  async reopenInDoubt(tx: Sql, paymentId: string): Promise<boolean> {
    const rows = await tx.query(
      `UPDATE payments SET state = 'creating', updated_at = now()
        WHERE id = $1::uuid AND state = 'in_doubt' AND payflow_id IS NULL
       RETURNING id::text AS id`,
      [paymentId],
    );
    return rows.length > 0;
  }

  /** The payment links of the order's payments, oldest payment first (privacy export and erasure). */
  personalDataOf(sql: Sql, orderId: string): Promise<PaymentPersonalData[]> {
    return queryRows(
      sql,
      personalDataRow,
      `SELECT id::text AS "paymentId", payflow_id AS "payflowId", payment_link AS "paymentLink"
         FROM payments WHERE order_id = $1 ORDER BY created_at, id`,
      [orderId],
    );
  }

  /** Forgets the payment links of the order's payments; the number forgotten. */
  erasePaymentLinks(tx: Sql, orderId: string): Promise<number> {
    return tx.execute(
      `UPDATE payments SET payment_link = NULL WHERE order_id = $1 AND payment_link IS NOT NULL`,
      [orderId],
    );
  }

  /** The payments of these Payflow ids, for the settlement reconciliation. */
  settlementFacts(sql: Sql, payflowIds: readonly string[]): Promise<SettlementPayment[]> {
    return queryRows(
      sql,
      settlementPaymentRow,
      `SELECT id::text AS "paymentId", payflow_id AS "payflowId", order_id AS "orderId",
              organization_id AS "organizationId", currency,
              total_gross_minor::text AS "totalGrossMinor", payment_ref AS "paymentRef",
              external_ref AS "externalRef"
         FROM payments WHERE payflow_id = ANY($1::text[])`,
      [payflowIds],
    );
  }

  /** Payflow ids of paid payments created before a time, in id order (`not_settled` candidates). */
  async paidPayflowIds(
    sql: Sql,
    range: { organizationId: string | null; createdBefore: Date; after: string; limit: number },
  ): Promise<string[]> {
    const rows = await sql.query<{ id: string }>(
      `SELECT payflow_id AS id FROM payments WHERE status = 'paid' AND payflow_id > $3
          AND created_at < $2 AND ($1::text IS NULL OR organization_id = $1) ORDER BY 1 LIMIT $4`,
      [range.organizationId, range.createdBefore, range.after, range.limit],
    );
    return rows.map((row) => row.id);
  }
}
