import { Entity } from 'typeorm';
import { col } from '../database/columns.js';

/** A row of a settlement file that did not parse; the file is stored all the same. */
@Entity({ name: 'settlement_file_errors' })
export class SettlementFileErrorEntity {
  @col.key.uuid('file_id') fileId!: string;

  /** 1-based line of the file where the row starts (the header is line 1). */
  @col.key.int('line_number') lineNumber!: number;

  @col.text() message!: string;
}
