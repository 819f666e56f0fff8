import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A row of a settlement file that did not parse; the file is stored all the same. */
@Entity({ name: 'settlement_file_errors' })
export class SettlementFileErrorEntity {
  @PrimaryColumn({ name: 'file_id', type: 'uuid' })
  fileId!: string;

  /** 1-based line of the file where the row starts (the header is line 1). */
  @PrimaryColumn({ name: 'line_number', type: 'int' })
  lineNumber!: number;

  @Column({ type: 'text' })
  message!: string;
}
