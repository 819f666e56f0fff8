import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A webhook from Payflow, stored before Payflow got its 2xx. Processed later: the
 * payment's authoritative status is fetched and compared with what Postgres holds, so the
 * body is kept for diagnosis only. `dedupe_key` makes a repeated delivery a no-op (kept
 * at least 7 days, longer than Payflow's 5.4-day retry span).
 */
@Entity({ name: 'webhook_inbox' })
@Index('webhook_inbox_pending_idx', ['nextAttemptAt', 'id'], { where: `"processed_at" IS NULL` })
@Index('webhook_inbox_received_idx', ['receivedAt'])
export class WebhookInboxEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'payment_id', type: 'uuid' })
  paymentId!: string;

  /** payment-update, status-update or terminal-failure. */
  @Column({ type: 'text' })
  kind!: string;

  @Index('webhook_inbox_dedupe_key', { unique: true })
  @Column({ name: 'dedupe_key', type: 'text' })
  dedupeKey!: string;

  @Column({ type: 'bytea' })
  body!: Buffer;

  /** Request headers with secrets (api key, authorization) redacted. */
  @Column({ type: 'jsonb', default: () => `'{}'` })
  headers!: Record<string, string>;

  /** accepted (authenticated and stored). */
  @Column({ type: 'text' })
  verdict!: string;

  /** Repeated deliveries of the same webhook seen after the first. */
  @Column({ type: 'int', default: 0 })
  duplicates!: number;

  @Column({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt!: Date;

  @Column({ name: 'last_received_at', type: 'timestamptz', default: () => 'now()' })
  lastReceivedAt!: Date;

  @Column({ type: 'int', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', default: () => 'now()' })
  nextAttemptAt!: Date;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true })
  processedAt!: Date | null;
}
