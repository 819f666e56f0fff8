/**
 * The order pipeline: the consumer (@EventPattern per order event type), its eleven
 * handlers, the command engine and the Postgres dead-letter sink.
 *
 *   imports: [OrdersModule]                                  // defaults from APP_CONFIG
 *   imports: [OrdersModule.forRoot({ attemptLeaseMs: … })]   // with overrides
 *
 * Needs (global): DataSource (DatabaseModule), APP_CONFIG (ConfigModule), APP_LOGGER
 * (LoggerModule), PAYFLOW_API (PayflowModule, global or passed in `imports`).
 * Exports: the handlers (PaymentRequestedHandler.resolveInDoubt for the webhook receiver),
 * DEAD_LETTER_SINK, TransactionBatcher, ORDERS_OPTIONS.
 */
import { Module, type DynamicModule, type ModuleMetadata } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { TransactionBatcherModule } from '../database/transaction-batcher.js';
import { DeadLettersModule } from '../dead-letters/dead-letters.module.js';
import { OutboxWriterModule } from '../events/outbox-writer.module.js';
import { CancelledHandler } from './cancelled/cancelled.handler.js';
import { OrderCommandEngine } from './common/command-engine.js';
import { PaymentMethodCatalog } from './common/payment-methods.js';
import { DocumentAttachedHandler } from './document-attached/document-attached.handler.js';
import { DocumentRemovedHandler } from './document-removed/document-removed.handler.js';
import { InstallmentAddedHandler } from './installment-added/installment-added.handler.js';
import { InstallmentChangedHandler } from './installment-changed/installment-changed.handler.js';
import { InstallmentRemovedHandler } from './installment-removed/installment-removed.handler.js';
import { MarkedPaidHandler } from './marked-paid/marked-paid.handler.js';
import { OrdersConsumer } from './orders.consumer.js';
import {
  ORDERS_OPTIONS,
  ORDERS_OPTION_OVERRIDES,
  ordersOptionsFromConfig,
  type OrdersOptions,
} from './orders.options.js';
import { PaymentRequestedHandler } from './payment-requested/payment-requested.handler.js';
import { PaymentResendRequestedHandler } from './payment-resend-requested/payment-resend-requested.handler.js';
import { RefundRequestedHandler } from './refund-requested/refund-requested.handler.js';
import { TerminalReceiptRequestedHandler } from './terminal-receipt-requested/terminal-receipt-requested.handler.js';

export type OrdersOptionOverrides = Partial<OrdersOptions> & {
  /** Lease = PAYFLOW_REQUEST_TIMEOUT + this margin (default 5 s). */
  readonly leaseMarginMs?: number;
};

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

@Module({
  imports: [TransactionBatcherModule, DeadLettersModule, OutboxWriterModule],
  controllers: [OrdersConsumer],
  providers: [
    {
      provide: ORDERS_OPTIONS,
      inject: [APP_CONFIG, { token: ORDERS_OPTION_OVERRIDES, optional: true }],
      useFactory: (config: AppConfig, overrides: OrdersOptionOverrides | undefined) =>
        ordersOptionsFromConfig(config, overrides ?? {}),
    },
    PaymentMethodCatalog,
    OrderCommandEngine,
    ...ORDER_HANDLERS,
  ],
  exports: [...ORDER_HANDLERS, ORDERS_OPTIONS, TransactionBatcherModule, DeadLettersModule],
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
