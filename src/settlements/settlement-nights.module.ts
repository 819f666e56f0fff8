/**
 * The settlement tables' repository (the tracked nights and their files), for the doors
 * that read or give up nights: the CLI's `settlements status` and `settlements forget`,
 * the operator console later. Needs (global): DataSource (DatabaseModule).
 */
import { Module } from '@nestjs/common';
import { DatabaseModule } from '../database/database.module.js';
import { SettlementFileChunkEntity } from './settlement-file-chunk.entity.js';
import { SettlementFileErrorEntity } from './settlement-file-error.entity.js';
import { SettlementFileEntity } from './settlement-file.entity.js';
import { SettlementNightEntity } from './settlement-night.entity.js';
import { SettlementRepository } from './settlement.repository.js';

@Module({
  imports: [
    DatabaseModule.forFeature([
      SettlementFileEntity,
      SettlementFileChunkEntity,
      SettlementFileErrorEntity,
      SettlementNightEntity,
    ]),
  ],
  providers: [SettlementRepository],
  exports: [SettlementRepository],
})
export class SettlementNightsModule {}
