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

/** The outbox table: written inside the state change's transaction, drained by the relay. */
/**
 * The key as the outbox stores it (text): bytes that are not UTF-8 become U+FFFD, as does
 * NUL, which Postgres text cannot hold; a key with NUL would otherwise make the write fail
 * for good and stop its partition. Such a key leaves altered (docs/events.md).
 */
export function outboxKeyText(key: string | Buffer | null): string | null {
  if (key === null) return null;
  return key.toString().replaceAll('\u0000', '\uFFFD');
}

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

  /** Forgets published messages older than `olderThanDays` (they are kept for diagnosis). */
  async prunePublished(sql: Sql, olderThanDays: number): Promise<number> {
    return sql.execute(
      `DELETE FROM outbox WHERE published_at IS NOT NULL AND published_at < now() - make_interval(days => $1)`,
      [olderThanDays],
    );
  }
}
