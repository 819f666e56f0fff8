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
import { DeadLetterRepository } from '../dead-letters/dead-letter.repository.js';
import { OrderPersistenceModule } from '../orders/order-persistence.module.js';
import { OrderRepository } from '../orders/order.repository.js';
import { OutboxRepository } from '../outbox/outbox.repository.js';
import { DocumentRepository } from '../payments/document.repository.js';
import { PaymentRepository } from '../payments/payment.repository.js';
import { PaymentsPersistenceModule } from '../payments/payments-persistence.module.js';
import { UnexplainedEffectRepository } from '../payments/unexplained-effects/unexplained-effect.repository.js';
import { PrivacyEraseService } from './erase/privacy-erase.service.js';
import { PrivacyExportService } from './export/privacy-export.service.js';
import type { PersonalDataStores } from './personal-data-stores.js';
import { WebhookInboxRepository } from '../webhooks/inbox/webhook-inbox.repository.js';
import { PRIVACY_ENTITIES } from './privacy-erasure.entity.js';
import { PrivacyErasureRepository } from './privacy-erasure.repository.js';
import {
  PERSONAL_DATA_RETENTION_OPTIONS,
  PersonalDataRetentionJob,
  type PersonalDataRetentionOptions,
} from './retention/personal-data-retention.job.js';

/** The PersonalDataStores both services read and write through. */
const PERSONAL_DATA_STORES = Symbol('PERSONAL_DATA_STORES');

export interface PrivacyModuleOptions {
  /** The daily retention job (the worker); absent: no job (the CLI). */
  readonly retention?: PersonalDataRetentionOptions;
}

/** The repositories of the stores that hold personal data, in PersonalDataStores' order. */
const STORES = [
  OrderRepository,
  PaymentRepository,
  DocumentRepository,
  UnexplainedEffectRepository,
  DeadLetterRepository,
  OutboxRepository,
  WebhookInboxRepository,
] as const;

/** Builds PersonalDataStores from STORES, injected in that order. */
function personalDataStores(
  orders: OrderRepository,
  payments: PaymentRepository,
  documents: DocumentRepository,
  effects: UnexplainedEffectRepository,
  letters: DeadLetterRepository,
  outbox: OutboxRepository,
  webhooks: WebhookInboxRepository,
): PersonalDataStores {
  return { orders, payments, documents, effects, letters, outbox, webhooks };
}

@Module({
  imports: [
    DatabaseModule.forFeature(PRIVACY_ENTITIES),
    OrderPersistenceModule,
    PaymentsPersistenceModule,
  ],
})
export class PrivacyModule {
  static forRoot(options: PrivacyModuleOptions = {}): DynamicModule {
    const services: Provider[] = [
      Database,
      // Orders' and payments' repositories come from their persistence modules (imported).
      UnexplainedEffectRepository,
      DeadLetterRepository,
      OutboxRepository,
      WebhookInboxRepository,
      PrivacyErasureRepository,
      { provide: PERSONAL_DATA_STORES, inject: [...STORES], useFactory: personalDataStores },
      {
        provide: PrivacyEraseService,
        inject: [Database, PERSONAL_DATA_STORES, PrivacyErasureRepository, APP_CONFIG],
        useFactory: (
          database: Database,
          stores: PersonalDataStores,
          erasures: PrivacyErasureRepository,
          config: Pick<AppConfig, 'TOPIC_ORDERS'>,
        ) =>
          new PrivacyEraseService(database, stores, erasures, {
            ordersTopic: config.TOPIC_ORDERS,
          }),
      },
      {
        provide: PrivacyExportService,
        inject: [Database, PERSONAL_DATA_STORES],
        useFactory: (database: Database, stores: PersonalDataStores) =>
          new PrivacyExportService(database, stores),
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
