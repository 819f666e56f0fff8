import { Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

/**
 * A night the bridge owes a pull for: `missing` until a pull succeeds, then `pulled`.
 * Missing nights are caught up oldest first on the next run.
 */
@Entity({ name: 'settlement_nights' })
@Index('settlement_nights_missing_idx', ['organizationId', 'settlementDate'], {
  where: `"status" = 'missing'`,
})
@Index('settlement_nights_file_idx', ['fileId'])
export class SettlementNightEntity {
  @col.key.text('organization_id') organizationId!: string;
  @col.key.date('settlement_date') settlementDate!: string;
  @col.key.text() format!: string;

  /** missing or pulled. */
  @col.text() status!: string;

  /** cron (the nightly run started tracking it) or cli (a pull by hand did). */
  @col.text('tracked_by') trackedBy!: string;

  /** The latest file of this night (set once pulled). */
  @col.uuid('file_id', { nullable: true }) fileId!: string | null;

  @col.int('attempts', { default: 0 }) attempts!: number;
  @col.timestamp('last_attempt_at', { nullable: true }) lastAttemptAt!: Date | null;
  @col.text('last_error', { nullable: true }) lastError!: string | null;
  @col.now('created_at') createdAt!: Date;
  @col.timestamp('pulled_at', { nullable: true }) pulledAt!: Date | null;
}
