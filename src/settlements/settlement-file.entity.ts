import { Entity, Index } from 'typeorm';
import { col } from '../database/columns.js';

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
  @col.uuidId() id!: string;
  @col.text('organization_id') organizationId!: string;
  @col.date('date_from') dateFrom!: string;
  @col.date('date_to') dateTo!: string;
  @col.text() format!: string;

  /** 1 for the first content pulled, then +1 for each content that differed. */
  @col.int() version!: number;

  @col.uuid('previous_file_id', { nullable: true }) previousFileId!: string | null;

  /** Hex SHA-256 of the raw bytes. */
  @col.char(64) sha256!: string;

  @col.bigint('size_bytes') sizeBytes!: string;

  /** Data rows that parsed (the header row not counted). */
  @col.int('row_count') rowCount!: number;

  @col.int('bad_row_count') badRowCount!: number;
  @col.text('content_type') contentType!: string;

  /** cron or cli. */
  @col.text() trigger!: string;

  @col.now('pulled_at') pulledAt!: Date;
}
