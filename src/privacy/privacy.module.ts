/**
 * Personal data (CONTRACT §10, docs/privacy.md), a folder per use case:
 *
 *   export/     `privacy export`: what the bridge holds for some orders, as JSON
 *   erase/      `privacy erase`: every copy removed, ids, amounts, states and order kept
 *   retention/  RETENTION_PERSONAL_DATA: the same erasure, daily, for orders untouched longer
 *
 *   PrivacyModule.forRoot()                                  the CLI: export and erase
 *   PrivacyModule.forRoot({ retention: { retentionMs, … } }) the worker: and the daily job
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (TOPIC_ORDERS).
 */
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { Database } from '../database/database.js';
import { PrivacyEraseService } from './erase/privacy-erase.service.js';
import { PrivacyExportService } from './export/privacy-export.service.js';
import { PersonalDataRepository } from './personal-data.repository.js';
import { PRIVACY_ENTITIES } from './privacy-erasure.entity.js';
import { PrivacyErasureRepository } from './privacy-erasure.repository.js';
import {
  PERSONAL_DATA_RETENTION_OPTIONS,
  PersonalDataRetentionJob,
  type PersonalDataRetentionOptions,
} from './retention/personal-data-retention.job.js';

export interface PrivacyModuleOptions {
  /** The daily retention job (the worker); absent: no job (the CLI). */
  readonly retention?: PersonalDataRetentionOptions;
}

@Module({ imports: [DatabaseModule.forFeature(PRIVACY_ENTITIES)] })
export class PrivacyModule {
  static forRoot(options: PrivacyModuleOptions = {}): DynamicModule {
    const services: Provider[] = [
      Database,
      PersonalDataRepository,
      PrivacyErasureRepository,
      {
        provide: PrivacyEraseService,
        inject: [Database, PersonalDataRepository, PrivacyErasureRepository, APP_CONFIG],
        useFactory: (
          database: Database,
          personalData: PersonalDataRepository,
          erasures: PrivacyErasureRepository,
          config: Pick<AppConfig, 'TOPIC_ORDERS'>,
        ) =>
          new PrivacyEraseService(database, personalData, erasures, {
            ordersTopic: config.TOPIC_ORDERS,
          }),
      },
      {
        provide: PrivacyExportService,
        inject: [Database, PersonalDataRepository],
        useFactory: (database: Database, personalData: PersonalDataRepository) =>
          new PrivacyExportService(database, personalData),
      },
    ];
    const { retention } = options;
    if (retention === undefined) {
      return {
        module: PrivacyModule,
        providers: services,
        exports: [PrivacyEraseService, PrivacyExportService],
      };
    }
    return {
      module: PrivacyModule,
      imports: [ScheduleModule.forRoot()],
      providers: [
        ...services,
        { provide: PERSONAL_DATA_RETENTION_OPTIONS, useValue: retention },
        PersonalDataRetentionJob,
      ],
      exports: [PrivacyEraseService, PrivacyExportService, PersonalDataRetentionJob],
    };
  }
}
