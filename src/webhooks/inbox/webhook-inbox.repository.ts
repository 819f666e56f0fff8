/**
 * Writes of the receiver to the `webhook_inbox` table (the processor owns the reads and
 * the processing columns): the deduplicating insert, run inside the caller's (batched)
 * transaction, and the pruning of processed rows past the retention.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Database, type Sql } from '../../database/database.js';
import type { WebhookKind } from '../../payflow/payflow.schemas.js';

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

@Injectable()
export class WebhookInboxRepository {
  constructor(@Inject(Database) private readonly database: Database) {}

  /** Stores a webhook, or counts it as a duplicate of the row with the same dedupe key. */
  async insert(tx: Sql, row: NewInboxRow): Promise<InsertOutcome> {
    const [result] = await tx.query<{ id: string; inserted: boolean }>(INSERT, [
      row.paymentId,
      row.kind,
      row.dedupeKey,
      row.body,
      JSON.stringify(row.headers),
    ]);
    if (result === undefined) throw new Error('webhook_inbox insert returned no row');
    return { inboxId: result.id, inserted: result.inserted };
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
}
