/**
 * The SQL of personal data in the tables other features own (docs/privacy.md lists each
 * column): what an export reads and what an erasure rewrites, and nothing else. The tables'
 * own repositories keep everything else about them; the webhook tables' feature is not
 * touched (its inbox rows are read and rewritten here by id).
 *
 * Every write is guarded so that it changes a row only when the row still holds something to
 * erase: a second erasure writes nothing and counts 0.
 */
import { Injectable } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';
import { ERASED } from './personal-json.js';

const headersField = z.record(z.string(), z.unknown());

const orderRow = z.object({
  orderId: z.string(),
  customerNumber: z.string().nullable(),
  personalDataErasedAt: timestampField.nullable(),
});
export type PersonalOrderRow = z.infer<typeof orderRow>;

const paymentRow = z.object({
  paymentId: z.string(),
  payflowId: z.string().nullable(),
  paymentLink: z.string().nullable(),
});
export type PersonalPaymentRow = z.infer<typeof paymentRow>;

const documentRow = z.object({
  id: z.string(),
  paymentId: z.string(),
  documentRef: z.string(),
  fileName: z.string(),
});
export type PersonalDocumentRow = z.infer<typeof documentRow>;

const effectRow = z.object({
  id: z.string(),
  kind: z.string(),
  payflowId: z.string(),
  fileName: z.string().nullable(),
});
export type PersonalEffectRow = z.infer<typeof effectRow>;

const letterRow = z.object({
  id: z.string(),
  eventId: z.string().nullable(),
  eventType: z.string().nullable(),
  reason: z.string(),
  error: z.string(),
  failedAt: timestampField,
  erasedAt: timestampField.nullable(),
  discardReason: z.string().nullable(),
  value: z.instanceof(Buffer).nullable(),
  headers: headersField,
});
export type PersonalLetterRow = z.infer<typeof letterRow>;

const outboxRow = z.object({
  id: z.string(),
  topic: z.string(),
  createdAt: timestampField,
  publishedAt: timestampField.nullable(),
  value: z.instanceof(Buffer),
  headers: headersField,
});
export type PersonalOutboxRow = z.infer<typeof outboxRow>;

const webhookRow = z.object({
  id: z.string(),
  paymentId: z.string(),
  kind: z.string(),
  receivedAt: timestampField,
  body: z.instanceof(Buffer),
  headers: headersField,
});
export type PersonalWebhookRow = z.infer<typeof webhookRow>;

/** What a dead letter becomes when its personal data is erased. */
export interface ErasedLetter {
  readonly id: string;
  readonly value: Buffer | null;
  /** The event itself lost data: marked erased (a replay refuses it from now on). */
  readonly eventErased: boolean;
  readonly error: string;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly discardReason: string | null;
}

/** What an outbox row or a webhook becomes. */
export interface ErasedMessage {
  readonly id: string;
  readonly bytes: Buffer;
  readonly headers: Readonly<Record<string, unknown>>;
}

const idRow = z.object({ orderId: z.string() });
const keylessRow = z.object({ id: z.string() });

@Injectable()
export class PersonalDataRepository {
  /** The orders whose payment request named this customer number. */
  async ordersOfCustomer(sql: Sql, customerNumber: string): Promise<string[]> {
    const rows = await queryRows(
      sql,
      idRow,
      `SELECT order_id AS "orderId" FROM orders WHERE customer_number = $1 ORDER BY order_id`,
      [customerNumber],
    );
    return rows.map((row) => row.orderId);
  }

  /**
   * Dead letters whose value holds the customer number as text (an order whose payment
   * request never took effect has no customer number in `orders`): candidates only, the
   * caller reads each value to be sure.
   */
  lettersMentioning(sql: Sql, text: string): Promise<{ orderId: string; value: Buffer | null }[]> {
    return queryRows(
      sql,
      z.object({ orderId: z.string(), value: z.instanceof(Buffer).nullable() }),
      `SELECT d.order_id AS "orderId", d.value FROM dead_letters d
        WHERE d.order_id IS NOT NULL AND position(convert_to($1, 'UTF8') IN d.value) > 0
        ORDER BY d.id`,
      [text],
    );
  }

  /** Whether the bridge holds anything under this order id (its row, a dead letter, an outbox row). */
  async knows(sql: Sql, orderId: string): Promise<boolean> {
    const [row] = await queryRows(
      sql,
      z.object({ known: z.boolean() }),
      `SELECT EXISTS (SELECT 1 FROM orders WHERE order_id = $1)
           OR EXISTS (SELECT 1 FROM dead_letters WHERE order_id = $1)
           OR EXISTS (SELECT 1 FROM outbox WHERE key = $1) AS known`,
      [orderId],
    );
    return row?.known === true;
  }

  /** The order's row, or null when the bridge has none. */
  async order(sql: Sql, orderId: string): Promise<PersonalOrderRow | null> {
    const [row] = await queryRows(
      sql,
      orderRow,
      `SELECT order_id AS "orderId", customer_number AS "customerNumber",
              personal_data_erased_at AS "personalDataErasedAt"
         FROM orders WHERE order_id = $1`,
      [orderId],
    );
    return row ?? null;
  }

  payments(sql: Sql, orderId: string): Promise<PersonalPaymentRow[]> {
    return queryRows(
      sql,
      paymentRow,
      `SELECT id::text AS "paymentId", payflow_id AS "payflowId", payment_link AS "paymentLink"
         FROM payments WHERE order_id = $1 ORDER BY created_at, id`,
      [orderId],
    );
  }

  documents(sql: Sql, orderId: string): Promise<PersonalDocumentRow[]> {
    return queryRows(
      sql,
      documentRow,
      `SELECT d.id::text AS id, d.payment_id::text AS "paymentId", d.document_ref AS "documentRef",
              d.file_name AS "fileName"
         FROM documents d JOIN payments p ON p.id = d.payment_id
        WHERE p.order_id = $1 ORDER BY d.created_at, d.id`,
      [orderId],
    );
  }

  unexplainedEffects(sql: Sql, orderId: string): Promise<PersonalEffectRow[]> {
    return queryRows(
      sql,
      effectRow,
      `SELECT id::text AS id, kind, payflow_id AS "payflowId", file_name AS "fileName"
         FROM unexplained_effects WHERE order_id = $1 ORDER BY id`,
      [orderId],
    );
  }

  /** The order's dead letters, oldest first; `lock`: FOR UPDATE. */
  deadLetters(sql: Sql, orderId: string, lock = false): Promise<PersonalLetterRow[]> {
    return queryRows(
      sql,
      letterRow,
      `SELECT ${LETTER_COLUMNS} FROM dead_letters d WHERE d.order_id = $1
        ORDER BY d.id${lock ? ' FOR UPDATE' : ''}`,
      [orderId],
    );
  }

  /** Key-less dead letters (no order id) that failed before `cutoff` and were not erased. */
  async keylessLettersBefore(sql: Sql, cutoff: Date, limit: number): Promise<string[]> {
    const rows = await queryRows(
      sql,
      keylessRow,
      `SELECT d.id::text AS id FROM dead_letters d
        WHERE d.order_id IS NULL AND d.erased_at IS NULL AND d.failed_at < $1
        ORDER BY d.id LIMIT $2`,
      [cutoff, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Dead letters by id, locked. */
  lockLetters(tx: Sql, ids: readonly string[]): Promise<PersonalLetterRow[]> {
    return queryRows(
      tx,
      letterRow,
      `SELECT ${LETTER_COLUMNS} FROM dead_letters d WHERE d.id = ANY($1::bigint[])
        ORDER BY d.id FOR UPDATE`,
      [ids],
    );
  }

  /** The outbox rows keyed by the order (status events, `.dlq` copies, replayed events). */
  outbox(sql: Sql, orderId: string, lock = false): Promise<PersonalOutboxRow[]> {
    return queryRows(
      sql,
      outboxRow,
      `SELECT id::text AS id, topic, created_at AS "createdAt", published_at AS "publishedAt",
              value, headers
         FROM outbox WHERE key = $1 ORDER BY id${lock ? ' FOR UPDATE' : ''}`,
      [orderId],
    );
  }

  /** The webhooks Payflow sent about the order's payments. */
  webhooks(sql: Sql, orderId: string, lock = false): Promise<PersonalWebhookRow[]> {
    return queryRows(
      sql,
      webhookRow,
      `SELECT w.id::text AS id, w.payment_id::text AS "paymentId", w.kind,
              w.received_at AS "receivedAt", w.body, w.headers
         FROM webhook_inbox w
        WHERE w.payment_id IN (SELECT p.id FROM payments p WHERE p.order_id = $1)
        ORDER BY w.id${lock ? ' FOR UPDATE OF w' : ''}`,
      [orderId],
    );
  }

  /**
   * Orders with personal data untouched since before `cutoff` (their row, payments, dead
   * letters and webhooks), not erased since they were last touched; up to `limit`.
   */
  async untouchedOrders(sql: Sql, cutoff: Date, limit: number): Promise<string[]> {
    const rows = await queryRows(
      sql,
      idRow,
      `WITH activity AS (
         SELECT o.order_id, o.personal_data_erased_at AS erased_at,
                GREATEST(o.updated_at,
                  (SELECT max(p.updated_at) FROM payments p WHERE p.order_id = o.order_id),
                  (SELECT max(GREATEST(d.failed_at, d.replayed_at, d.discarded_at))
                     FROM dead_letters d WHERE d.order_id = o.order_id),
                  (SELECT max(w.last_received_at) FROM webhook_inbox w
                     JOIN payments p ON p.id = w.payment_id WHERE p.order_id = o.order_id)
                ) AS touched_at
           FROM orders o WHERE o.updated_at < $1)
       SELECT order_id AS "orderId" FROM activity
        WHERE touched_at < $1 AND (erased_at IS NULL OR erased_at < touched_at)
        ORDER BY touched_at, order_id LIMIT $2`,
      [cutoff, limit],
    );
    return rows.map((row) => row.orderId);
  }

  /** Locks the order's row (if any) until the end of the transaction. */
  async lockOrder(tx: Sql, orderId: string): Promise<void> {
    await tx.query('SELECT 1 FROM orders WHERE order_id = $1 FOR UPDATE', [orderId]);
  }

  /** Whether a replayed event of the order still waits in the outbox for `topic`. */
  async replayPending(tx: Sql, orderId: string, topic: string): Promise<boolean> {
    const rows = await tx.query(
      `SELECT 1 FROM outbox WHERE key = $1 AND topic = $2 AND published_at IS NULL LIMIT 1`,
      [orderId, topic],
    );
    return rows.length > 0;
  }

  // --- writes -------------------------------------------------------------------------

  /** Forgets the order's customer number; 1 when there was one. */
  eraseOrderRow(tx: Sql, orderId: string): Promise<number> {
    return tx.execute(
      `UPDATE orders SET customer_number = NULL WHERE order_id = $1 AND customer_number IS NOT NULL`,
      [orderId],
    );
  }

  /** Marks the order erased now (the retention takes it again only once touched since). */
  async markOrderErased(tx: Sql, orderId: string): Promise<void> {
    await tx.execute(`UPDATE orders SET personal_data_erased_at = now() WHERE order_id = $1`, [
      orderId,
    ]);
  }

  /** Forgets the payment links of the order's payments. */
  erasePaymentLinks(tx: Sql, orderId: string): Promise<number> {
    return tx.execute(
      `UPDATE payments SET payment_link = NULL WHERE order_id = $1 AND payment_link IS NOT NULL`,
      [orderId],
    );
  }

  /** Replaces the file names of the order's documents with ERASED. */
  eraseDocumentNames(tx: Sql, orderId: string): Promise<number> {
    return tx.execute(
      `UPDATE documents d SET file_name = $2
         FROM payments p
        WHERE p.id = d.payment_id AND p.order_id = $1 AND d.file_name <> $2`,
      [orderId, ERASED],
    );
  }

  /** Replaces the file names of the order's unexplained effects with ERASED. */
  eraseEffectNames(tx: Sql, orderId: string): Promise<number> {
    return tx.execute(
      `UPDATE unexplained_effects SET file_name = $2
        WHERE order_id = $1 AND file_name IS NOT NULL AND file_name <> $2`,
      [orderId, ERASED],
    );
  }

  /**
   * Writes an erased dead letter; when its event lost data, marks it erased (a replay
   * refuses it from now on).
   */
  async writeErasedLetter(tx: Sql, letter: ErasedLetter): Promise<void> {
    await tx.execute(
      `UPDATE dead_letters
          SET value = $2, error = $3, headers = $4::jsonb, discard_reason = $5,
              erased_at = CASE WHEN $6::boolean THEN COALESCE(erased_at, now()) ELSE erased_at END
        WHERE id = $1::bigint`,
      [
        letter.id,
        letter.value,
        letter.error,
        JSON.stringify(letter.headers),
        letter.discardReason,
        letter.eventErased,
      ],
    );
  }

  async writeErasedOutbox(tx: Sql, message: ErasedMessage): Promise<void> {
    await tx.execute(`UPDATE outbox SET value = $2, headers = $3::jsonb WHERE id = $1::bigint`, [
      message.id,
      message.bytes,
      JSON.stringify(message.headers),
    ]);
  }

  async writeErasedWebhook(tx: Sql, message: ErasedMessage): Promise<void> {
    await tx.execute(
      `UPDATE webhook_inbox SET body = $2, headers = $3::jsonb WHERE id = $1::bigint`,
      [message.id, message.bytes, JSON.stringify(message.headers)],
    );
  }
}

const LETTER_COLUMNS = `d.id::text AS id, d.event_id AS "eventId", d.event_type AS "eventType",
  d.reason, d.error, d.failed_at AS "failedAt", d.erased_at AS "erasedAt",
  d.discard_reason AS "discardReason", d.value, d.headers`;
