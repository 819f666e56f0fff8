/**
 * The only owner of the `webhook_inbox` table's SQL: the receiver's deduplicating insert
 * (inside its caller's batched transaction), the processor's claim, completion and
 * deferral, the pruning of processed rows past the retention, and what a privacy export
 * reads and an erasure rewrites of an order's webhooks (src/privacy).
 */
import { Inject, Injectable } from '@nestjs/common';
import { z } from 'zod';
import { Database, type Sql } from '../../database/database.js';
import { countsByHour, queryRows, type HourlyCount } from '../../database/parsed-rows.js';
import { timestampField } from '../../database/row-schemas.js';
import type { WebhookKind } from '../../payflow/wire/payflow.schemas.js';

export interface NewInboxRow {
  readonly paymentId: string;
  readonly kind: WebhookKind;
  readonly dedupeKey: string;
  /** The body's bytes as received. */
  readonly body: Buffer;
  /** Request headers, secrets already redacted. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface InsertOutcome {
  readonly inboxId: string;
  /** false: a row with this dedupe key existed; its `duplicates` was incremented. */
  readonly inserted: boolean;
}

/** A stored webhook claimed for processing. */
export interface ClaimedInboxRow {
  readonly id: string;
  readonly paymentId: string;
  readonly kind: string;
  /** Failed attempts before this claim (each deferral counts one). */
  readonly attempts: number;
  /** The body's bytes as received. */
  readonly body: Buffer;
  /** The request's W3C trace headers, when it carried them. */
  readonly trace: { readonly traceparent: string; readonly tracestate?: string } | null;
}

/** A claimed row that failed for now, and how long it waits before its next attempt. */
export interface DeferredInboxRow {
  readonly id: string;
  readonly delayMs: number;
}

const insertedRow = z.object({ id: z.string(), inserted: z.boolean() });

const claimedRow = z
  .object({
    id: z.string(),
    payment_id: z.string(),
    kind: z.string(),
    attempts: z.number().int(),
    body: z.instanceof(Buffer),
    traceparent: z.string().nullable(),
    tracestate: z.string().nullable(),
  })
  .transform((row): ClaimedInboxRow => ({
    id: row.id,
    paymentId: row.payment_id,
    kind: row.kind,
    attempts: row.attempts,
    body: row.body,
    trace:
      row.traceparent === null
        ? null
        : row.tracestate === null
          ? { traceparent: row.traceparent }
          : { traceparent: row.traceparent, tracestate: row.tracestate },
  }));

/**
 * Due rows, claimed with FOR UPDATE SKIP LOCKED and leased (next_attempt_at pushed by the
 * lease), so several replicas share the work and no transaction stays open across a call.
 */
const CLAIM = `
  UPDATE webhook_inbox w
     SET next_attempt_at = clock_timestamp() + $2 * interval '1 millisecond'
   WHERE w.id IN (SELECT id FROM webhook_inbox
                   WHERE processed_at IS NULL AND next_attempt_at <= now()
                   ORDER BY next_attempt_at, id
                   LIMIT $1 FOR UPDATE SKIP LOCKED)
   RETURNING w.id::text AS id, w.payment_id::text AS payment_id, w.kind, w.attempts, w.body,
             w.headers->>'traceparent' AS traceparent, w.headers->>'tracestate' AS tracestate`;

const INSERT = `
  INSERT INTO webhook_inbox (payment_id, kind, dedupe_key, body, headers, verdict)
  VALUES ($1, $2, $3, $4, $5::jsonb, 'accepted')
  ON CONFLICT (dedupe_key) DO UPDATE
    SET duplicates = webhook_inbox.duplicates + 1, last_received_at = now()
  RETURNING id::text AS id, (xmax = 0) AS inserted`;

const PRUNE = `
  DELETE FROM webhook_inbox WHERE id IN (
    SELECT id FROM webhook_inbox
    WHERE processed_at IS NOT NULL AND received_at < now() - make_interval(secs => $1)
    LIMIT $2)`;

const receivedRow = z.object({
  paymentId: z.string(),
  id: z.string(),
  kind: z.string(),
  receivedAt: timestampField,
  lastReceivedAt: timestampField,
  duplicates: z.number(),
  attempts: z.number(),
  processedAt: timestampField.nullable(),
  lastError: z.string().nullable(),
  /** The W3C traceparent it arrived with, if any. */
  traceparent: z.string().nullable(),
});

/** A stored webhook as the operator's reads show it: when, which kind, processed or not. */
export type ReceivedWebhook = z.infer<typeof receivedRow>;

const pendingStatsRow = z.object({ pending: z.number().int(), oldest: z.number() });

const personalWebhookRow = z.object({
  id: z.string(),
  paymentId: z.string(),
  kind: z.string(),
  receivedAt: timestampField,
  body: z.instanceof(Buffer),
  headers: z.record(z.string(), z.unknown()),
});

/** A stored webhook as a privacy export shows it and an erasure reads it. */
export type WebhookPersonalData = z.infer<typeof personalWebhookRow>;

/** What a stored webhook becomes when its personal data is erased: its body and headers. */
export interface ErasedWebhook {
  readonly id: string;
  readonly bytes: Buffer;
  readonly headers: Readonly<Record<string, unknown>>;
}

@Injectable()
export class WebhookInboxRepository {
  constructor(@Inject(Database) private readonly database: Database) {}

  /**
   * The payments' webhooks, in the order they came (never the body or the headers).
   * Static: it needs only the `Sql` it is given, so the CLI's reads use it without the
   * worker's `Database`.
   */
  static listForPayments(sql: Sql, paymentIds: readonly string[]): Promise<ReceivedWebhook[]> {
    return queryRows(
      sql,
      receivedRow,
      `SELECT payment_id::text AS "paymentId", id::text AS id, kind, received_at AS "receivedAt",
              last_received_at AS "lastReceivedAt", duplicates, attempts,
              processed_at AS "processedAt", last_error AS "lastError",
              headers->>'traceparent' AS traceparent
         FROM webhook_inbox WHERE payment_id = ANY($1::uuid[]) ORDER BY received_at, id`,
      [paymentIds],
    );
  }

  /**
   * Webhooks stored per hour since `since` (webhook_inbox_received_idx; hours without any
   * are left out). Static, like listForPayments: the operator's reads give the `Sql`.
   */
  static countsByHour(sql: Sql, since: Date): Promise<HourlyCount[]> {
    return countsByHour(sql, 'webhook_inbox', 'received_at', since);
  }

  /** Stores a webhook, or counts it as a duplicate of the row with the same dedupe key. */
  async insert(tx: Sql, row: NewInboxRow): Promise<InsertOutcome> {
    const [returned] = await tx.query(INSERT, [
      row.paymentId,
      row.kind,
      row.dedupeKey,
      row.body,
      JSON.stringify(row.headers),
    ]);
    if (returned === undefined) throw new Error('webhook_inbox insert returned no row');
    const result = insertedRow.parse(returned);
    return { inboxId: result.id, inserted: result.inserted };
  }

  /** Claims up to `limit` due rows for `leaseMs`. */
  async claim(limit: number, leaseMs: number): Promise<ClaimedInboxRow[]> {
    const rows = await this.database.sql.query(CLAIM, [limit, leaseMs]);
    return rows.map((row) => claimedRow.parse(row));
  }

  /** Rows not processed yet, and the age of the oldest (0 when none), for the metrics. */
  async pendingStats(): Promise<{ readonly pending: number; readonly oldestSeconds: number }> {
    const [row] = await this.database.sql.query(
      `SELECT count(*)::int AS pending,
              COALESCE(extract(epoch FROM now() - min(received_at)), 0)::float8 AS oldest
         FROM webhook_inbox WHERE processed_at IS NULL`,
    );
    const parsed = pendingStatsRow.parse(row);
    return { pending: parsed.pending, oldestSeconds: parsed.oldest };
  }

  /** The rows are done (`error`: why they were given up, else null). */
  async markProcessed(tx: Sql, ids: readonly string[], error: string | null): Promise<void> {
    await tx.execute(
      `UPDATE webhook_inbox SET processed_at = clock_timestamp(), last_error = $2
        WHERE id = ANY($1::bigint[]) AND processed_at IS NULL`,
      [ids, error],
    );
  }

  /**
   * The rows stay pending: attempts + 1, `error`, and each row's next attempt after its
   * `delayMs` (the caller's back-off; this table only stores when).
   */
  async defer(rows: readonly DeferredInboxRow[], error: string): Promise<void> {
    await this.database.sql.execute(
      `UPDATE webhook_inbox w
          SET attempts = w.attempts + 1, last_error = $3,
              next_attempt_at = clock_timestamp() + d.delay_ms * interval '1 millisecond'
         FROM unnest($1::bigint[], $2::float8[]) AS d(id, delay_ms)
        WHERE w.id = d.id AND w.processed_at IS NULL`,
      [rows.map((row) => row.id), rows.map((row) => row.delayMs), error],
    );
  }

  /**
   * Deletes processed rows received more than `retentionMs` ago, `chunk` rows per
   * statement (short transactions, no long lock). Unprocessed rows are never deleted.
   * Returns how many rows went.
   */
  async prune(retentionMs: number, chunk = 5_000): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.database.sql.execute(PRUNE, [retentionMs / 1000, chunk]);
      total += deleted;
      if (deleted < chunk) return total;
    }
  }

  /** The webhooks Payflow sent about the order's payments, in id order; `lock`: FOR UPDATE. */
  personalDataOf(sql: Sql, orderId: string, lock = false): Promise<WebhookPersonalData[]> {
    return queryRows(
      sql,
      personalWebhookRow,
      `SELECT w.id::text AS id, w.payment_id::text AS "paymentId", w.kind,
              w.received_at AS "receivedAt", w.body, w.headers
         FROM webhook_inbox w
        WHERE w.payment_id IN (SELECT p.id FROM payments p WHERE p.order_id = $1)
        ORDER BY w.id${lock ? ' FOR UPDATE OF w' : ''}`,
      [orderId],
    );
  }

  /** Rewrites an erased webhook's body and headers. */
  async writeErased(tx: Sql, webhook: ErasedWebhook): Promise<void> {
    await tx.execute(
      `UPDATE webhook_inbox SET body = $2, headers = $3::jsonb WHERE id = $1::bigint`,
      [webhook.id, webhook.bytes, JSON.stringify(webhook.headers)],
    );
  }
}
