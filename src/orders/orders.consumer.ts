/**
 * The order events' entry point: one @EventPattern per type of ORDER_EVENT_TYPES (the
 * transport checks at start-up that each has exactly one). Each method only validates the
 * event's data, builds the command and hands it to its handler; failures propagate to the
 * transport's failure policy (retry or dead letter).
 */
import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { InvalidEventError } from '../dead-letters/dead-letter.errors.js';
import { OrderEventContext } from './order-event.context.js';
import { CancelledCommand } from './cancelled/cancelled.command.js';
import { CancelledHandler } from './cancelled/cancelled.handler.js';
import { sourceOf, type CommandOutcome } from './engine/order-command.js';
import { DocumentAttachedCommand } from './document-attached/document-attached.command.js';
import { DocumentAttachedHandler } from './document-attached/document-attached.handler.js';
import { DocumentRemovedCommand } from './document-removed/document-removed.command.js';
import { DocumentRemovedHandler } from './document-removed/document-removed.handler.js';
import { InstallmentAddedCommand } from './installment-added/installment-added.command.js';
import { InstallmentAddedHandler } from './installment-added/installment-added.handler.js';
import { InstallmentChangedCommand } from './installment-changed/installment-changed.command.js';
import { InstallmentChangedHandler } from './installment-changed/installment-changed.handler.js';
import { InstallmentRemovedCommand } from './installment-removed/installment-removed.command.js';
import { InstallmentRemovedHandler } from './installment-removed/installment-removed.handler.js';
import { MarkedPaidCommand } from './marked-paid/marked-paid.command.js';
import { MarkedPaidHandler } from './marked-paid/marked-paid.handler.js';
import {
  parseOrderEvent,
  type OrderEnvelope,
  type OrderEvent,
  type OrderEventType,
} from './order-event.schema.js';
import { PaymentRequestedCommand } from './payment-requested/payment-requested.command.js';
import { PaymentRequestedHandler } from './payment-requested/payment-requested.handler.js';
import { PaymentResendRequestedCommand } from './payment-resend-requested/payment-resend-requested.command.js';
import { PaymentResendRequestedHandler } from './payment-resend-requested/payment-resend-requested.handler.js';
import { RefundRequestedCommand } from './refund-requested/refund-requested.command.js';
import { RefundRequestedHandler } from './refund-requested/refund-requested.handler.js';
import { TerminalReceiptRequestedCommand } from './terminal-receipt-requested/terminal-receipt-requested.command.js';
import { TerminalReceiptRequestedHandler } from './terminal-receipt-requested/terminal-receipt-requested.handler.js';

/** The envelope's data, validated against the schema of the type this method serves. */
function eventOf<T extends OrderEventType>(type: T, envelope: OrderEnvelope): OrderEvent<T> {
  if (envelope.type !== type) {
    throw new InvalidEventError(
      `event of type "${envelope.type.slice(0, 100)}" routed to the handler of ${type}`,
      { metadata: { eventId: envelope.eventId } },
    );
  }
  return parseOrderEvent({ ...envelope, type });
}

@Controller()
export class OrdersConsumer {
  constructor(
    private readonly paymentRequested: PaymentRequestedHandler,
    private readonly cancelled: CancelledHandler,
    private readonly refundRequested: RefundRequestedHandler,
    private readonly installmentAdded: InstallmentAddedHandler,
    private readonly installmentChanged: InstallmentChangedHandler,
    private readonly installmentRemoved: InstallmentRemovedHandler,
    private readonly markedPaid: MarkedPaidHandler,
    private readonly resendRequested: PaymentResendRequestedHandler,
    private readonly documentAttached: DocumentAttachedHandler,
    private readonly documentRemoved: DocumentRemovedHandler,
    private readonly receiptRequested: TerminalReceiptRequestedHandler,
  ) {}

  @EventPattern<OrderEventType>('order.payment_requested')
  async onPaymentRequested(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.payment_requested', envelope);
    return await this.paymentRequested.execute(
      new PaymentRequestedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.cancelled')
  async onCancelled(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.cancelled', envelope);
    return await this.cancelled.execute(
      new CancelledCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.refund_requested')
  async onRefundRequested(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.refund_requested', envelope);
    return await this.refundRequested.execute(
      new RefundRequestedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.installment_added')
  async onInstallmentAdded(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.installment_added', envelope);
    return await this.installmentAdded.execute(
      new InstallmentAddedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.installment_changed')
  async onInstallmentChanged(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.installment_changed', envelope);
    return await this.installmentChanged.execute(
      new InstallmentChangedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.installment_removed')
  async onInstallmentRemoved(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.installment_removed', envelope);
    return await this.installmentRemoved.execute(
      new InstallmentRemovedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.marked_paid')
  async onMarkedPaid(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.marked_paid', envelope);
    return await this.markedPaid.execute(
      new MarkedPaidCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.payment_resend_requested')
  async onPaymentResendRequested(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.payment_resend_requested', envelope);
    return await this.resendRequested.execute(
      new PaymentResendRequestedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.document_attached')
  async onDocumentAttached(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.document_attached', envelope);
    return await this.documentAttached.execute(
      new DocumentAttachedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.document_removed')
  async onDocumentRemoved(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.document_removed', envelope);
    return await this.documentRemoved.execute(
      new DocumentRemovedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }

  @EventPattern<OrderEventType>('order.terminal_receipt_requested')
  async onTerminalReceiptRequested(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    const event = eventOf('order.terminal_receipt_requested', envelope);
    return await this.receiptRequested.execute(
      new TerminalReceiptRequestedCommand(event, sourceOf(ctx.getMessage()), ctx.getAttempt()),
    );
  }
}
