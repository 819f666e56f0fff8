/**
 * The order pipeline: the consumer (one @EventPattern for every order event type), its
 * eleven handlers, the command runner with its attempt ledger, the repositories of the
 * order tables.
 *
 *   imports: [OrdersModule]                                  // defaults from APP_CONFIG
 *   imports: [OrdersModule.forRoot({ attemptLeaseMs: … })]   // with overrides
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (ConfigModule), APP_LOGGER
 * (LoggerModule), PayflowClient (PayflowModule, global or passed in `imports`).
 * Exports: the handlers, IN_DOUBT_RESOLVER (the port of src/payments, for the webhook
 * processor), TransactionBatcher, ORDERS_OPTIONS; and, to the whole
 * application (OrderEventCodecModule is global), INBOUND_EVENT_CODEC: how the generic
 * inbound-events transport reads order events.
 */
import { Global, Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import { TransactionBatcherModule } from '../database/transaction-batcher.js';
import { OutboxWriterModule } from '../outbox/outbox-writer.module.js';
import { INBOUND_EVENT_CODEC } from '../messaging/messaging.ports.js';
import { IN_DOUBT_RESOLVER } from '../payments/in-doubt-resolver.port.js';
import { PaymentsPersistenceModule } from '../payments/payments-persistence.module.js';
import { CancelledHandler } from './cancelled/cancelled.handler.js';
import { CommandAttemptEntity } from './command-attempt.entity.js';
import { DocumentAttachedHandler } from './document-attached/document-attached.handler.js';
import { DocumentRemovedHandler } from './document-removed/document-removed.handler.js';
import { AttemptBegin } from './engine/attempt-begin.js';
import { CommandAttemptRepository } from './engine/attempts/command-attempt.repository.js';
import { CommandRunner } from './engine/command-runner.js';
import { InDoubtVerdictEntity } from './in-doubt/in-doubt-verdict.entity.js';
import { InstallmentAddedHandler } from './installment-added/installment-added.handler.js';
import { InstallmentChangedHandler } from './installment-changed/installment-changed.handler.js';
import { InstallmentRemovedHandler } from './installment-removed/installment-removed.handler.js';
import { MarkedPaidHandler } from './marked-paid/marked-paid.handler.js';
import { orderEventCodec } from './order-event.codec.js';
import { OrderEntity } from './order.entity.js';
import { OrderPersistenceModule } from './order-persistence.module.js';
import { OrdersConsumer } from './orders.consumer.js';
import {
  ORDERS_OPTIONS,
  ORDERS_OPTION_OVERRIDES,
  ordersOptionsFromConfig,
  type OrdersOptions,
} from './orders.options.js';
import { PaymentCreationResolver } from './payment-requested/payment-creation.resolver.js';
import { PaymentRequestedHandler } from './payment-requested/payment-requested.handler.js';
import { PaymentResendRequestedHandler } from './payment-resend-requested/payment-resend-requested.handler.js';
import { RefundRequestedHandler } from './refund-requested/refund-requested.handler.js';
import { ProcessedEventEntity } from './processed-event.entity.js';
import { ProcessedEventRepository } from './processed-event.repository.js';
import { NewPaymentWrites } from './new-payment/new-payment.js';
import { PaymentMethodCatalog } from './mapping/payment-methods.js';
import { PaymentTargets } from './latest-payment/payment-target.js';
import { TerminalReceiptRequestedHandler } from './terminal-receipt-requested/terminal-receipt-requested.handler.js';

export type OrdersOptionOverrides = Partial<OrdersOptions> & {
  /** Lease = PAYFLOW_REQUEST_TIMEOUT + this margin (default 5 s). */
  readonly leaseMarginMs?: number;
};

export const ORDER_ENTITIES = [
  OrderEntity,
  ProcessedEventEntity,
  CommandAttemptEntity,
  InDoubtVerdictEntity,
];

export const ORDER_HANDLERS = [
  PaymentRequestedHandler,
  CancelledHandler,
  RefundRequestedHandler,
  InstallmentAddedHandler,
  InstallmentChangedHandler,
  InstallmentRemovedHandler,
  MarkedPaidHandler,
  PaymentResendRequestedHandler,
  DocumentAttachedHandler,
  DocumentRemovedHandler,
  TerminalReceiptRequestedHandler,
] as const;

/** INBOUND_EVENT_CODEC for InboundEventsTransportModule, wherever the application imports it. */
@Global()
@Module({
  providers: [{ provide: INBOUND_EVENT_CODEC, useValue: orderEventCodec }],
  exports: [INBOUND_EVENT_CODEC],
})
export class OrderEventCodecModule {}

@Module({
  imports: [
    DatabaseModule.forFeature(ORDER_ENTITIES),
    OrderEventCodecModule,
    TransactionBatcherModule,
    OrderPersistenceModule,
    OutboxWriterModule,
    PaymentsPersistenceModule,
  ],
  controllers: [OrdersConsumer],
  providers: [
    {
      provide: ORDERS_OPTIONS,
      inject: [APP_CONFIG, { token: ORDERS_OPTION_OVERRIDES, optional: true }],
      useFactory: (config: AppConfig, overrides: OrdersOptionOverrides | undefined) =>
        ordersOptionsFromConfig(config, overrides ?? {}),
    },
    ProcessedEventRepository,
    CommandAttemptRepository,
    PaymentMethodCatalog,
    PaymentTargets,
    NewPaymentWrites,
    AttemptBegin,
    CommandRunner,
    PaymentCreationResolver,
    { provide: IN_DOUBT_RESOLVER, useExisting: PaymentCreationResolver },
    ...ORDER_HANDLERS,
  ],
  exports: [...ORDER_HANDLERS, IN_DOUBT_RESOLVER, ORDERS_OPTIONS, TransactionBatcherModule],
})
export class OrdersModule {
  static forRoot(
    overrides: OrdersOptionOverrides = {},
    imports: ModuleMetadata['imports'] = [],
  ): DynamicModule {
    return {
      module: OrdersModule,
      imports,
      providers: [{ provide: ORDERS_OPTION_OVERRIDES, useValue: overrides }],
    };
  }
}
