/**
 * The transactional outbox's table: rows written with a state change, bucketed by a hash
 * of their Kafka key so that one relay at a time publishes a key's rows, in id order.
 */
import { createHash } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { z } from 'zod';
import type { Sql } from '../database/database.js';
import { queryRows } from '../database/parsed-rows.js';
import { timestampField } from '../database/row-schemas.js';
import type { OutboundMessage } from '../messaging/messaging.ports.js';
import { OUTBOX_NOTIFY_CHANNEL } from './relay-locks.repository.js';

export const OUTBOX_REPOSITORY_OPTIONS = Symbol('OUTBOX_REPOSITORY_OPTIONS');

export interface OutboxRepositoryOptions {
  /**
   * NOTIFY the relays inside every transaction that adds rows, so that they wake when it
   * commits. For writers with no relay in their process (the CLI). The worker's writers
   * wake their own relay after the commit instead (RelayWakeup says why).
   */
  readonly notifyInTransaction?: boolean;
}

/** How a pass takes each bucket's rows: every topic is a lane, bulk topics get fewer. */
export interface OutboxLanes {
  /** Rows per topic of a bucket. */
  readonly limit: number;
  /** Topics whose rows come in bulk (settlement events). */
  readonly bulkTopics: readonly string[];
  /** Rows per bulk topic of a bucket. */
  readonly bulkLimit: number;
}

/**
 * The pending topics of each bucket, found by a loose index scan of
 * outbox_pending_lane_idx (one probe per topic, however many rows wait), then each topic's
 * oldest rows: a status event waits behind its own topic's rows only.
 */
const LOCK_PENDING = `
  WITH RECURSIVE lanes (bucket, topic) AS (
    SELECT b.bucket, (SELECT min(o.topic) FROM outbox o
                       WHERE o.published_at IS NULL AND o.bucket = b.bucket)
      FROM unnest($1::smallint[]) AS b (bucket)
    UNION ALL
    SELECT l.bucket, (SELECT min(o.topic) FROM outbox o
                       WHERE o.published_at IS NULL AND o.bucket = l.bucket AND o.topic > l.topic)
      FROM lanes l WHERE l.topic IS NOT NULL)
  SELECT r.id, r.bucket, r.topic, r.key, r.value, r.headers
    FROM lanes l
   CROSS JOIN LATERAL (
         SELECT id, bucket, topic, key, value, headers FROM outbox
          WHERE published_at IS NULL AND outbox.bucket = l.bucket AND outbox.topic = l.topic
          ORDER BY id
          LIMIT CASE WHEN l.topic = ANY($3::text[]) THEN $4::int ELSE $2::int END
          FOR UPDATE SKIP LOCKED) AS r
   WHERE l.topic IS NOT NULL
   ORDER BY r.id`;

/** Outbox buckets: one relay at a time owns a bucket, so each key's messages keep their order. */
export const OUTBOX_BUCKETS = 16;

export function outboxBucket(key: string | Buffer | null): number {
  if (key === null) return 0;
  return createHash('sha1').update(key).digest().readUInt16BE(0) % OUTBOX_BUCKETS;
}

export interface PendingOutboxMessage extends OutboundMessage {
  readonly id: string;
  readonly bucket: number;
}

/**
 * The key as the outbox stores it (text): bytes that are not UTF-8 become U+FFFD, as does
 * NUL, which Postgres text cannot hold; a key with NUL would otherwise make the write fail
 * for good and stop its partition. Such a key leaves altered (docs/events.md).
 */
export function outboxKeyText(key: string | Buffer | null): string | null {
  if (key === null) return null;
  return key.toString().replaceAll('\u0000', '\uFFFD');
}

/**
 * The outbox table, and the only owner of its SQL: written inside the state change's
 * transaction, drained by the relay.
 */
const writtenRow = z.object({
  id: z.string(),
  topic: z.string(),
  key: z.string().nullable(),
  eventType: z.string().nullable(),
  traceparent: z.string().nullable(),
  value: z.instanceof(Buffer),
  createdAt: timestampField,
  publishedAt: timestampField.nullable(),
});

/** A message the outbox holds (pending or published, until pruned), as the operator reads it. */
export type WrittenMessage = z.infer<typeof writtenRow>;

const personalDataRow = z.object({
  id: z.string(),
  topic: z.string(),
  createdAt: timestampField,
  publishedAt: timestampField.nullable(),
  value: z.instanceof(Buffer),
  headers: z.record(z.string(), z.unknown()),
});

/** An outbox row as a privacy export shows it and an erasure reads it. */
export type OutboxPersonalData = z.infer<typeof personalDataRow>;

/** What an outbox row becomes when its personal data is erased: its value and headers. */
export interface ErasedOutboxRow {
  readonly id: string;
  readonly bytes: Buffer;
  readonly headers: Readonly<Record<string, unknown>>;
}

@Injectable()
export class OutboxRepository {
  private readonly notifyInTransaction: boolean;

  constructor(@Optional() @Inject(OUTBOX_REPOSITORY_OPTIONS) options?: OutboxRepositoryOptions) {
    this.notifyInTransaction = options?.notifyInTransaction ?? false;
  }

  /**
   * The messages written with one of these keys (an order id, Payflow payment ids), oldest
   * first (outbox_key_idx); published ones stay until prunePublished removes them.
   */
  listByKeys(sql: Sql, keys: readonly string[]): Promise<WrittenMessage[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return queryRows(
      sql,
      writtenRow,
      `SELECT id::text AS id, topic, key, headers->>'x-event-type' AS "eventType",
              headers->>'traceparent' AS traceparent, value, created_at AS "createdAt",
              published_at AS "publishedAt"
         FROM outbox WHERE key = ANY($1::text[]) ORDER BY id`,
      [keys],
    );
  }

  /** Adds messages in the caller's transaction; they are published after it commits. */
  async add(tx: Sql, messages: readonly OutboundMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const buckets: number[] = [];
    const topics: string[] = [];
    const keys: (string | null)[] = [];
    const values: Buffer[] = [];
    const headers: string[] = [];
    for (const message of messages) {
      const key = outboxKeyText(message.key);
      buckets.push(outboxBucket(key));
      topics.push(message.topic);
      keys.push(key);
      values.push(
        Buffer.isBuffer(message.value) ? message.value : Buffer.from(message.value, 'utf8'),
      );
      headers.push(JSON.stringify(message.headers ?? {}));
    }
    await tx.execute(
      `INSERT INTO outbox (bucket, topic, key, value, headers)
       SELECT * FROM unnest($1::smallint[], $2::text[], $3::text[], $4::bytea[], $5::jsonb[])`,
      [buckets, topics, keys, values, headers],
    );
    if (this.notifyInTransaction) {
      // Postgres sends one NOTIFY per transaction however many adds ask for it.
      await tx.query('SELECT pg_notify($1, $2)', [OUTBOX_NOTIFY_CHANNEL, '']);
    }
  }

  /**
   * Each given bucket's oldest unpublished messages, per topic (`lanes.limit` rows of a
   * topic, `lanes.bulkLimit` of a bulk topic), locked for this transaction, in id order;
   * `full` when a lane reached its limit (more rows wait).
   */
  async lockPending(
    tx: Sql,
    buckets: readonly number[],
    lanes: OutboxLanes,
  ): Promise<{ rows: PendingOutboxMessage[]; full: boolean }> {
    const rows = await tx.query<{
      id: string;
      bucket: number;
      topic: string;
      key: string | null;
      value: Buffer;
      headers: Record<string, string>;
    }>(LOCK_PENDING, [buckets, lanes.limit, lanes.bulkTopics, lanes.bulkLimit]);
    const perLane = new Map<string, number>();
    let full = false;
    for (const row of rows) {
      const lane = `${row.bucket}/${row.topic}`;
      const count = (perLane.get(lane) ?? 0) + 1;
      perLane.set(lane, count);
      if (count >= (lanes.bulkTopics.includes(row.topic) ? lanes.bulkLimit : lanes.limit)) {
        full = true;
      }
    }
    return { rows, full };
  }

  async markPublished(tx: Sql, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await tx.execute(`UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])`, [ids]);
  }

  /** The newest pending row of `buckets` (its id as decimal text), or null when none is pending. */
  async newestPendingId(sql: Sql, buckets: readonly number[]): Promise<string | null> {
    const [head] = await sql.query<{ max: string | null }>(
      `SELECT max(id)::text AS max FROM outbox
        WHERE published_at IS NULL AND bucket = ANY($1::smallint[])`,
      [buckets],
    );
    return head?.max ?? null;
  }

  /** Pending rows of `buckets` up to id `upTo`, counted per bucket (buckets with none left out). */
  async pendingPerBucket(
    sql: Sql,
    upTo: string,
    buckets: readonly number[],
  ): Promise<{ bucket: number; count: number }[]> {
    return sql.query<{ bucket: number; count: number }>(
      `SELECT bucket, count(*)::int AS count FROM outbox
        WHERE published_at IS NULL AND id <= $1::bigint AND bucket = ANY($2::smallint[])
        GROUP BY bucket ORDER BY bucket`,
      [upTo, buckets],
    );
  }

  /** Pending rows and the age of the oldest one (null when none is pending). */
  async pendingStats(sql: Sql): Promise<{ count: number; oldestAgeSeconds: number | null }> {
    const [row] = await sql.query<{ count: number; oldest: number | null }>(
      `SELECT count(*)::int AS count,
              extract(epoch FROM now() - min(created_at))::float8 AS oldest
         FROM outbox WHERE published_at IS NULL`,
    );
    return { count: row?.count ?? 0, oldestAgeSeconds: row?.oldest ?? null };
  }

  /** Forgets published messages older than `olderThanDays` (they are kept for diagnosis). */
  async prunePublished(sql: Sql, olderThanDays: number): Promise<number> {
    return sql.execute(
      `DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < now() - make_interval(days => $1)`,
      [olderThanDays],
    );
  }

  // --- personal data (privacy export and erasure) -----------------------------------------

  /**
   * The rows written with this key (an order's status events, `.dlq` copies, replayed
   * events), published or not, in id order; `lock`: FOR UPDATE.
   */
  personalDataOf(sql: Sql, key: string, lock = false): Promise<OutboxPersonalData[]> {
    return queryRows(
      sql,
      personalDataRow,
      `SELECT id::text AS id, topic, created_at AS "createdAt", published_at AS "publishedAt",
              value, headers
         FROM outbox WHERE key = $1 ORDER BY id${lock ? ' FOR UPDATE' : ''}`,
      [key],
    );
  }

  /** Whether a row with this key still waits to be published to `topic`. */
  async hasPending(tx: Sql, key: string, topic: string): Promise<boolean> {
    const rows = await tx.query(
      `SELECT 1 FROM outbox WHERE key = $1 AND topic = $2 AND published_at IS NULL LIMIT 1`,
      [key, topic],
    );
    return rows.length > 0;
  }

  /** Rewrites an erased row's value and headers. */
  async writeErased(tx: Sql, row: ErasedOutboxRow): Promise<void> {
    await tx.execute(`UPDATE outbox SET value = $2, headers = $3::jsonb WHERE id = $1::bigint`, [
      row.id,
      row.bytes,
      JSON.stringify(row.headers),
    ]);
  }
}
