import { Entity } from 'typeorm';
import { col } from '../database/columns.js';

/** The raw bytes of a settlement file, in order, about 1 MiB a piece. */
@Entity({ name: 'settlement_file_chunks' })
export class SettlementFileChunkEntity {
  @col.key.uuid('file_id') fileId!: string;
  @col.key.int() seq!: number;
  @col.bytes() data!: Buffer;
}
