/**
 * The order events' entry point: one @EventPattern for every type of ORDER_EVENT_TYPES (the
 * transport checks at start-up that each has exactly one handler). It only validates the
 * event's data, makes the command and hands it, with its type's handler, to the command
 * runner; the runner's outcome becomes the transport's answer in one place (`delivered`:
 * an outcome that did not apply is thrown as the error the failure policy decides from).
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
import {
  ORDER_EVENT_TYPES,
  isOrderEventType,
  parseOrderEvent,
  type OrderEnvelope,
  type OrderEventType,
} from '../events/order-event.schema.js';
import { contextFromHeaders, Tracing } from '../tracing/tracing.js';
import { CancelledHandler } from './cancelled/cancelled.handler.js';
import { DocumentAttachedHandler } from './document-attached/document-attached.handler.js';
import { DocumentRemovedHandler } from './document-removed/document-removed.handler.js';
import { CommandRunner } from './engine/command-runner.js';
import { delivered, type Delivered } from './engine/command-outcome.js';
import type { OrderEventHandler } from './engine/command-spec.js';
import { OrderCommand, sourceOf } from './engine/order-command.js';
import { InstallmentAddedHandler } from './installment-added/installment-added.handler.js';
import { InstallmentChangedHandler } from './installment-changed/installment-changed.handler.js';
import { InstallmentRemovedHandler } from './installment-removed/installment-removed.handler.js';
import { MarkedPaidHandler } from './marked-paid/marked-paid.handler.js';
import { OrderEventContext } from './order-event.context.js';
import { PaymentRequestedHandler } from './payment-requested/payment-requested.handler.js';
import { PaymentResendRequestedHandler } from './payment-resend-requested/payment-resend-requested.handler.js';
import { RefundRequestedHandler } from './refund-requested/refund-requested.handler.js';
import {
  NO_SUPERSEDE_STEP,
  SUPERSEDE_STEP,
  type SupersedeStep,
} from './supersede/supersede.port.js';
import { TerminalReceiptRequestedHandler } from './terminal-receipt-requested/terminal-receipt-requested.handler.js';

/** The span options of a delivery when nothing is recorded. */
const CONSUMER_SPAN = { kind: 'consumer' } as const;

/** Each order event type's handler (the compiler checks that none is missing). */
type OrderEventHandlers = { readonly [T in OrderEventType]: OrderEventHandler<T> };

@Controller()
export class OrdersConsumer {
  private readonly handlers: OrderEventHandlers;

  constructor(
    private readonly runner: CommandRunner,
    paymentRequested: PaymentRequestedHandler,
    cancelled: CancelledHandler,
    refundRequested: RefundRequestedHandler,
    installmentAdded: InstallmentAddedHandler,
    installmentChanged: InstallmentChangedHandler,
    installmentRemoved: InstallmentRemovedHandler,
    markedPaid: MarkedPaidHandler,
    resendRequested: PaymentResendRequestedHandler,
    documentAttached: DocumentAttachedHandler,
    documentRemoved: DocumentRemovedHandler,
    receiptRequested: TerminalReceiptRequestedHandler,
    @Optional() private readonly tracing: Tracing = Tracing.off(),
    // Provided where the dead letters are (DeadLettersModule); elsewhere supersedes refuse.
    @Optional()
    @Inject(SUPERSEDE_STEP)
    private readonly supersede: SupersedeStep = NO_SUPERSEDE_STEP,
  ) {
    this.handlers = {
      'order.payment_requested': paymentRequested,
      'order.cancelled': cancelled,
      'order.refund_requested': refundRequested,
      'order.installment_added': installmentAdded,
      'order.installment_changed': installmentChanged,
      'order.installment_removed': installmentRemoved,
      'order.marked_paid': markedPaid,
      'order.payment_resend_requested': resendRequested,
      'order.document_attached': documentAttached,
      'order.document_removed': documentRemoved,
      'order.terminal_receipt_requested': receiptRequested,
    };
  }

  @EventPattern<OrderEventType[]>([...ORDER_EVENT_TYPES])
  async handle(
    @Payload() envelope: OrderEnvelope,
    @Ctx() ctx: OrderEventContext,
  ): Promise<Delivered> {
    const { type } = envelope;
    if (!isOrderEventType(type)) {
      // The codec refuses these before routing; kept so that this method stands alone.
      throw new InvalidEventError(`unknown event type "${String(type).slice(0, 100)}"`, {
        metadata: { eventId: envelope.eventId },
      });
    }
    return this.deliver(type, envelope, ctx);
  }

  /** One delivery of `type`, inside its span: validated, made a command, run by its handler's spec. */
  private async deliver<T extends OrderEventType>(
    type: T,
    envelope: OrderEnvelope,
    ctx: OrderEventContext,
  ): Promise<Delivered> {
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
      const event = parseOrderEvent({ ...envelope, type });
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
      const command = new OrderCommand(event, source, attempt, span);
      const outcome = await this.runner.run(command, this.handlers[type].spec);
      const answer = delivered(outcome);
      span.end();
      return answer;
    } catch (error) {
      span.end(error);
      throw error;
    }
  }
}
