/**
 * The transactional outbox's table: rows written with a state change, bucketed by a hash
 * of their Kafka key so that one relay at a time publishes a key's rows, in id order.
 */
import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Sql } from '../database/database.js';
import type { OutboundMessage } from '../messaging/messaging.ports.js';

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
@Injectable()
export class OutboxRepository {
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
  }

  /** Each given bucket's oldest unpublished messages (up to `limit` a bucket), locked for this transaction. */
  async lockPending(
    tx: Sql,
    buckets: readonly number[],
    limit: number,
  ): Promise<PendingOutboxMessage[]> {
    const rows = await tx.query<{
      id: string;
      bucket: number;
      topic: string;
      key: string | null;
      value: Buffer;
      headers: Record<string, string>;
    }>(
      `SELECT o.id, o.bucket, o.topic, o.key, o.value, o.headers
         FROM unnest($1::smallint[]) AS b (bucket)
        CROSS JOIN LATERAL (
              SELECT id, bucket, topic, key, value, headers FROM outbox
               WHERE published_at IS NULL AND outbox.bucket = b.bucket
               ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED) AS o
        ORDER BY o.id`,
      [buckets, limit],
    );
    return rows;
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
}
