import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The raw bytes of a settlement file, in order, about 1 MiB a piece. */
@Entity({ name: 'settlement_file_chunks' })
export class SettlementFileChunkEntity {
  @PrimaryColumn({ name: 'file_id', type: 'uuid' })
  fileId!: string;

  @PrimaryColumn({ type: 'int' })
  seq!: number;

  @Column({ type: 'bytea' })
  data!: Buffer;
}
