import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One distinct content of a settlement file: (organization, date range, format, version).
 * A re-pull with the same SHA-256 as the latest version stores nothing; a different
 * content becomes the next version and names the one it replaces.
 */
@Entity({ name: 'settlement_files' })
@Index(
  'settlement_files_version_key',
  ['organizationId', 'dateFrom', 'dateTo', 'format', 'version'],
  {
    unique: true,
  },
)
export class SettlementFileEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'date_from', type: 'date' })
  dateFrom!: string;

  @Column({ name: 'date_to', type: 'date' })
  dateTo!: string;

  @Column({ type: 'text' })
  format!: string;

  /** 1 for the first content pulled, then +1 for each content that differed. */
  @Column({ type: 'int' })
  version!: number;

  @Column({ name: 'previous_file_id', type: 'uuid', nullable: true })
  previousFileId!: string | null;

  /** Hex SHA-256 of the raw bytes. */
  @Column({ type: 'char', length: 64 })
  sha256!: string;

  @Column({ name: 'size_bytes', type: 'bigint' })
  sizeBytes!: string;

  /** Data rows that parsed (the header row not counted). */
  @Column({ name: 'row_count', type: 'int' })
  rowCount!: number;

  @Column({ name: 'bad_row_count', type: 'int' })
  badRowCount!: number;

  @Column({ name: 'content_type', type: 'text' })
  contentType!: string;

  /** cron or cli. */
  @Column({ type: 'text' })
  trigger!: string;

  @Column({ name: 'pulled_at', type: 'timestamptz', default: () => 'now()' })
  pulledAt!: Date;
}
