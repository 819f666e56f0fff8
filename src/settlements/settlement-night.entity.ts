import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A night the bridge owes a pull for: `missing` until a pull succeeds, then `pulled`.
 * Missing nights are caught up oldest first on the next run.
 */
@Entity({ name: 'settlement_nights' })
@Index('settlement_nights_missing_idx', ['organizationId', 'settlementDate'], {
  where: `"status" = 'missing'`,
})
export class SettlementNightEntity {
  @PrimaryColumn({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @PrimaryColumn({ name: 'settlement_date', type: 'date' })
  settlementDate!: string;

  @PrimaryColumn({ type: 'text' })
  format!: string;

  /** missing or pulled. */
  @Column({ type: 'text' })
  status!: string;

  /** cron (the nightly run started tracking it) or cli (a pull by hand did). */
  @Column({ name: 'tracked_by', type: 'text' })
  trackedBy!: string;

  /** The latest file of this night (set once pulled). */
  @Column({ name: 'file_id', type: 'uuid', nullable: true })
  fileId!: string | null;

  @Column({ type: 'int', default: 0 })
  attempts!: number;

  @Column({ name: 'last_attempt_at', type: 'timestamptz', nullable: true })
  lastAttemptAt!: Date | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'pulled_at', type: 'timestamptz', nullable: true })
  pulledAt!: Date | null;
}
