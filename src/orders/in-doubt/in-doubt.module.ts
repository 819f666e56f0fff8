/**
 * A person's verdict on a Payflow call in doubt (InDoubtService), for every door that asks
 * for one: the CLI's `in-doubt resolve` now, the operator console inside the worker later.
 *
 *   InDoubtModule.forRoot({ imports: [OperatorReadsModule, <a module exporting IN_DOUBT_ORDER_REPLAYER>] })
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (the topics of OutboxWriter, the
 * late-effect window);
 * PAYFLOW_API is optional: without it only the "not created" verdict can be given. From
 * `imports`: IN_DOUBT_CALLS (the read side's InDoubtListQuery) and IN_DOUBT_ORDER_REPLAYER
 * (how the order's parked events are republished once the verdict is recorded).
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { DatabaseModule } from '../../database/database.module.js';
import { Database } from '../../database/database.js';
import { TransactionBatcherModule } from '../../database/transaction-batcher.js';
import { OutboxWriterModule } from '../../outbox/outbox-writer.module.js';
import { PAYFLOW_API } from '../../payflow/payflow.module.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { PaymentsPersistenceModule } from '../../payments/payments-persistence.module.js';
import { CommandAttemptEntity } from '../command-attempt.entity.js';
import { CommandAttemptRepository } from '../engine/attempts/command-attempt.repository.js';
import { PaymentCreationResolver } from '../payment-requested/payment-creation.resolver.js';
import { OrderPersistenceModule } from '../order-persistence.module.js';
import { ProcessedEventRepository } from '../processed-event.repository.js';
import type { InDoubtCalls } from './in-doubt-calls.port.js';
import { InDoubtVerdictEntity } from './in-doubt-verdict.entity.js';
import { InDoubtVerdictRepository } from './in-doubt-verdict.repository.js';
import { InDoubtService, type OrderReplayer } from './in-doubt.service.js';

/** Injection token of the InDoubtCalls the service reads the order's call in doubt with. */
export const IN_DOUBT_CALLS = Symbol('IN_DOUBT_CALLS');
/** Injection token of the OrderReplayer that republishes an order's parked events. */
export const IN_DOUBT_ORDER_REPLAYER = Symbol('IN_DOUBT_ORDER_REPLAYER');

export type InDoubtModuleOptions = Pick<ModuleMetadata, 'imports'>;

@Module({})
export class InDoubtModule {
  static forRoot(options: InDoubtModuleOptions = {}): DynamicModule {
    return {
      module: InDoubtModule,
      imports: [
        DatabaseModule.forFeature([CommandAttemptEntity, InDoubtVerdictEntity]),
        TransactionBatcherModule,
        OutboxWriterModule,
        PaymentsPersistenceModule,
        OrderPersistenceModule,
        ...(options.imports ?? []),
      ],
      providers: [
        Database,
        ProcessedEventRepository,
        CommandAttemptRepository,
        InDoubtVerdictRepository,
        // The resolver a webhook settles an in-doubt creation with: one rule, two doors.
        PaymentCreationResolver,
        {
          provide: InDoubtService,
          inject: [
            Database,
            IN_DOUBT_CALLS,
            InDoubtVerdictRepository,
            CommandAttemptRepository,
            PaymentRepository,
            PaymentCreationResolver,
            { token: PAYFLOW_API, optional: true },
            IN_DOUBT_ORDER_REPLAYER,
            APP_CONFIG,
          ],
          useFactory: (
            database: Database,
            reads: InDoubtCalls,
            verdicts: InDoubtVerdictRepository,
            attempts: CommandAttemptRepository,
            payments: PaymentRepository,
            resolver: PaymentCreationResolver,
            payflow: PayflowApi | undefined,
            replayer: OrderReplayer,
            config: Pick<AppConfig, 'PAYFLOW_LATE_EFFECT_WINDOW'>,
          ) =>
            new InDoubtService({
              database,
              reads,
              verdicts,
              attempts,
              payments,
              resolver,
              payflow: payflow ?? null,
              replayer,
              lateEffectWindowMs: config.PAYFLOW_LATE_EFFECT_WINDOW,
            }),
        },
      ],
      exports: [InDoubtService],
    };
  }
}
