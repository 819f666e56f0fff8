import { Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/**
 * A webhook from Payflow, stored before Payflow got its 2xx. Processed later: the
 * payment's authoritative status is fetched and compared with what Postgres holds, so the
 * body is kept for diagnosis only. `dedupe_key` makes a repeated delivery a no-op (kept
 * at least 7 days, longer than Payflow's 5.4-day retry span).
 */
@Entity({ name: 'webhook_inbox' })
@Index('webhook_inbox_pending_idx', ['nextAttemptAt', 'id'], { where: `"processed_at" IS NULL` })
@Index('webhook_inbox_received_idx', ['receivedAt'])
@Index('webhook_inbox_payment_idx', ['paymentId', 'receivedAt'])
export class WebhookInboxEntity {
  @col.bigintId() id!: string;
  @col.uuid('payment_id') paymentId!: string;

  /** payment-update, status-update or terminal-failure. */
  @col.text() kind!: string;

  @Index('webhook_inbox_dedupe_key', { unique: true })
  @col.text('dedupe_key')
  dedupeKey!: string;

  @col.bytes() body!: Buffer;

  /** Request headers with secrets (api key, authorization) redacted. */
  @col.headers() headers!: Record<string, string>;

  /** accepted (authenticated and stored). */
  @col.text() verdict!: string;

  /** Repeated deliveries of the same webhook seen after the first. */
  @col.int('duplicates', { default: 0 }) duplicates!: number;

  @col.now('received_at') receivedAt!: Date;
  @col.now('last_received_at') lastReceivedAt!: Date;
  @col.int('attempts', { default: 0 }) attempts!: number;
  @col.now('next_attempt_at') nextAttemptAt!: Date;
  @col.text('last_error', { nullable: true }) lastError!: string | null;
  @col.timestamp('processed_at', { nullable: true }) processedAt!: Date | null;
}
