/**
 * The order events' entry point: one @EventPattern per type of ORDER_EVENT_TYPES (the
 * transport checks at start-up that each has exactly one). Each method only validates the
 * event's data, builds the command and hands it to its handler; failures propagate to the
 * transport's failure policy (retry or dead letter).
 *
 * Each delivery is handled inside one span (kind consumer) that continues the trace of the
 * event's `traceparent` header, or starts a new trace when it has none or a malformed one
 * (never an error). The span travels with the command (OrderCommand.trace), by hand: no
 * global context manager (see src/tracing/tracing.ts).
 *
 * An event whose envelope `supersedes` an earlier one (CONTRACT §10) first passes the
 * SupersedeStep (src/orders/supersede/supersede.port.ts), once its data is valid and
 * before its handler: it takes the replaced event's place, or is refused.
 */
import { Controller, Inject, Optional } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { InvalidEventError } from '../errors/dead-letter.errors.js';
import { OrderEventContext } from './order-event.context.js';
import { CancelledCommand } from './cancelled/cancelled.command.js';
import { CancelledHandler } from './cancelled/cancelled.handler.js';
import { contextFromHeaders, Tracing, type TraceSpan } from '../tracing/tracing.js';
import { sourceOf, type CommandOutcome, type EventSource } from './engine/order-command.js';
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
} from '../events/order-event.schema.js';
import { PaymentRequestedCommand } from './payment-requested/payment-requested.command.js';
import { PaymentRequestedHandler } from './payment-requested/payment-requested.handler.js';
import { PaymentResendRequestedCommand } from './payment-resend-requested/payment-resend-requested.command.js';
import { PaymentResendRequestedHandler } from './payment-resend-requested/payment-resend-requested.handler.js';
import { RefundRequestedCommand } from './refund-requested/refund-requested.command.js';
import { RefundRequestedHandler } from './refund-requested/refund-requested.handler.js';
import {
  NO_SUPERSEDE_STEP,
  SUPERSEDE_STEP,
  type SupersedeStep,
} from './supersede/supersede.port.js';
import { TerminalReceiptRequestedCommand } from './terminal-receipt-requested/terminal-receipt-requested.command.js';
import { TerminalReceiptRequestedHandler } from './terminal-receipt-requested/terminal-receipt-requested.handler.js';

/** The span options of a delivery when nothing is recorded. */
const CONSUMER_SPAN = { kind: 'consumer' } as const;

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
    @Optional() private readonly tracing: Tracing = Tracing.off(),
    // Provided where the dead letters are (DeadLettersModule); elsewhere supersedes refuse.
    @Optional()
    @Inject(SUPERSEDE_STEP)
    private readonly supersede: SupersedeStep = NO_SUPERSEDE_STEP,
  ) {}

  @EventPattern<OrderEventType>('order.payment_requested')
  onPaymentRequested(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.payment_requested', envelope, ctx, (...args) =>
      this.paymentRequested.execute(new PaymentRequestedCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.cancelled')
  onCancelled(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.cancelled', envelope, ctx, (...args) =>
      this.cancelled.execute(new CancelledCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.refund_requested')
  onRefundRequested(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.refund_requested', envelope, ctx, (...args) =>
      this.refundRequested.execute(new RefundRequestedCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.installment_added')
  onInstallmentAdded(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.installment_added', envelope, ctx, (...args) =>
      this.installmentAdded.execute(new InstallmentAddedCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.installment_changed')
  onInstallmentChanged(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.installment_changed', envelope, ctx, (...args) =>
      this.installmentChanged.execute(new InstallmentChangedCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.installment_removed')
  onInstallmentRemoved(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.installment_removed', envelope, ctx, (...args) =>
      this.installmentRemoved.execute(new InstallmentRemovedCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.marked_paid')
  onMarkedPaid(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.marked_paid', envelope, ctx, (...args) =>
      this.markedPaid.execute(new MarkedPaidCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.payment_resend_requested')
  onPaymentResendRequested(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.payment_resend_requested', envelope, ctx, (...args) =>
      this.resendRequested.execute(new PaymentResendRequestedCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.document_attached')
  onDocumentAttached(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.document_attached', envelope, ctx, (...args) =>
      this.documentAttached.execute(new DocumentAttachedCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.document_removed')
  onDocumentRemoved(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.document_removed', envelope, ctx, (...args) =>
      this.documentRemoved.execute(new DocumentRemovedCommand(...args)),
    );
  }

  @EventPattern<OrderEventType>('order.terminal_receipt_requested')
  onTerminalReceiptRequested(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<CommandOutcome> {
    return this.handle('order.terminal_receipt_requested', envelope, ctx, (...args) =>
      this.receiptRequested.execute(new TerminalReceiptRequestedCommand(...args)),
    );
  }

  /** One delivery of `type`, inside its span: validated, made a command, executed. */
  private async handle<T extends OrderEventType>(
    type: T,
    envelope: OrderEnvelope,
    ctx: OrderEventContext,
    execute: (
      event: OrderEvent<T>,
      source: EventSource,
      attempt: number,
      trace: TraceSpan,
    ) => Promise<CommandOutcome>,
  ): Promise<CommandOutcome> {
    const message = ctx.getMessage();
    // Taken up now: the timeline shows the event here, before what it causes.
    const source = sourceOf(message);
    const attempt = ctx.getAttempt();
    const span = this.tracing.start(
      'order.handle',
      contextFromHeaders(message.headers),
      // Attributes only when recorded: with the SDK off, no object per event for nothing.
      this.tracing.recording
        ? {
            kind: 'consumer',
            attributes: {
              'messaging.system': 'kafka',
              'messaging.operation.type': 'process',
              'messaging.destination.name': message.topic,
              'messaging.destination.partition.id': String(message.partition),
              'messaging.kafka.offset': message.offset,
              'order.event_type': type,
              'order.event_id': envelope.eventId,
              'order.id': envelope.orderId,
              'order.attempt': attempt,
            },
          }
        : CONSUMER_SPAN,
    );
    try {
      const event = eventOf(type, envelope);
      if (envelope.supersedes !== undefined) {
        // Before the handler: the replaced event's dead letter blocks the order, so the
        // engine would park this one behind it. Idempotent, so a redelivery passes again.
        await this.supersede.prepare({
          eventId: event.eventId,
          type,
          orderId: event.orderId,
          organizationId: event.organizationId,
          supersedes: envelope.supersedes,
          trace: span.headers(),
        });
      }
      const outcome = await execute(event, source, attempt, span);
      span.end();
      return outcome;
    } catch (error) {
      span.end(error);
      throw error;
    }
  }
}
