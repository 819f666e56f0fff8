/**
 * Nightly settlements (issue 5): the pull of one night (used by the cron and the CLI),
 * the nightly run over every organization and missing night, and its cron trigger.
 *
 *   SettlementsModule.forRoot({ outbox, options: { topic, cron, timeZone, formats } })
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG, APP_LOGGER, PAYFLOW_API. From
 * `outbox`: OutboxCommitted (the application's OutboxModule), which each night's pull
 * calls once its events committed.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { DatabaseModule } from '../database/database.module.js';
import { Database } from '../database/database.js';
import type { OutboxImport } from '../outbox/outbox-committed.js';
import { NightlySettlementsCron } from './nightly/nightly-settlements.cron.js';
import { NightlySettlementsRunner } from './nightly/nightly-settlements.runner.js';
import { NightTracker } from './nightly/night-tracker.js';
import { SettlementPullModule } from './pull/settlement-pull.module.js';
import { RECONCILIATION_ENTITIES } from './reconcile/settlement-reconcile.entity.js';
import { SettlementFileChunkEntity } from './settlement-file-chunk.entity.js';
import { SettlementFileErrorEntity } from './settlement-file-error.entity.js';
import { SettlementFileEntity } from './settlement-file.entity.js';
import { SettlementNightEntity } from './settlement-night.entity.js';
import { SETTLEMENTS_OPTIONS, type SettlementsOptions } from './settlements.options.js';

export interface SettlementsModuleOptions extends Pick<ModuleMetadata, 'imports'> {
  /** The module that provides OutboxCommitted: the settlement events' wake-up of the relay. */
  readonly outbox: OutboxImport;
  readonly options: SettlementsOptions;
}

export const SETTLEMENT_ENTITIES = [
  SettlementFileEntity,
  SettlementFileChunkEntity,
  SettlementFileErrorEntity,
  SettlementNightEntity,
  ...RECONCILIATION_ENTITIES,
];

@Module({ imports: [DatabaseModule.forFeature(SETTLEMENT_ENTITIES)] })
export class SettlementsModule {
  static forRoot(settings: SettlementsModuleOptions): DynamicModule {
    // The pull of one night: the same module the CLI and the console use.
    const pull = SettlementPullModule.forRoot({
      outbox: settings.outbox,
      imports: settings.imports ?? [],
    });
    return {
      module: SettlementsModule,
      imports: [ScheduleModule.forRoot(), pull, ...(settings.imports ?? [])],
      providers: [
        { provide: SETTLEMENTS_OPTIONS, useValue: settings.options },
        Database,
        NightTracker,
        NightlySettlementsRunner,
        NightlySettlementsCron,
      ],
      exports: [pull, NightlySettlementsRunner, NightlySettlementsCron],
    };
  }
}
