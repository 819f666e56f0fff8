/**
 * order.payment_requested → POST /api/payments. Every such event creates a new payment.
 *
 * Before the call, with the attempt (one statement for a fresh event, or for a burst of
 * them): the order row, the payment row (state `creating`, its webhook token and the
 * SHA-256 of its api_key) with its planned installments (shared/new-payment.ts). After it,
 * in one transaction: the payment `created` with Payflow's ids and link, the event
 * processed, `payment.created` in the outbox. A rejection marks the payment
 * `creation_failed` and emits `payment.creation_failed`; an unclear failure leaves it
 * `in_doubt` (never re-sent) until payment-creation.resolver.ts learns Payflow's id.
 */
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Sql } from '../../database/database.js';
import type { BatchSql } from '../../database/transaction-batcher.js';
import { PayflowValidationError } from '../../payflow/payflow.errors.js';
import type { CreatedPayment } from '../../payflow/payflow.types.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import type { StatusEvent } from '../../payments/payment-status-events.js';
import { executeTogether } from '../../database/statement.js';
import type {
  CommandFailure,
  CommandSpec,
  Completed,
  Mapped,
  OrderEventHandler,
  PayflowCallContext,
} from '../engine/command-spec.js';
import type { OrderCommand } from '../engine/order-command.js';
import { ORDERS_OPTIONS, type OrdersOptions } from '../orders.options.js';
import { PayflowClient } from '../../payflow/payflow.client.js';
import type { PayflowApi } from '../../payflow/payflow.types.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { PaymentMethodCatalog } from '../mapping/payment-methods.js';
import {
  newWebhookCredentials,
  webhookCallback,
  type WebhookCredentials,
} from '../new-payment/webhook-credentials.js';
import {
  creationFailedEvent,
  paymentCreatedEvent,
  type CreatedInstallmentView,
} from './payment-created.event.js';
import { mapPaymentRequested, type MappedPaymentRequest } from './payment-requested.mapping.js';

type Type = 'order.payment_requested';

interface CreateState {
  readonly organizationId: string | null;
  readonly mapped: MappedPaymentRequest;
  readonly credentials: WebhookCredentials;
}

interface CreatedRow {
  readonly paymentId: string;
  readonly result: CreatedPayment;
}

@Injectable()
export class PaymentRequestedHandler implements OrderEventHandler<Type> {
  readonly spec: CommandSpec<Type, CreateState, CreatedPayment>;
  /** Key of the batch-wide write of created payments. */
  private readonly createdKey = {};

  constructor(
    @Inject(PayflowClient) private readonly payflow: PayflowApi,
    private readonly payments: PaymentRepository,
    private readonly paymentMethods: PaymentMethodCatalog,
    private readonly installments: InstallmentRepository,
    @Inject(ORDERS_OPTIONS) private readonly options: OrdersOptions,
  ) {
    this.spec = {
      type: 'order.payment_requested',
      repeatable: false,
      map: (command) => this.map(command),
      call: (state, context) => this.call(state, context),
      complete: (tx, completed) => this.complete(tx, completed),
      onFailure: (tx, failure, command) => this.onFailure(tx, failure, command),
    };
  }

  private async map(command: OrderCommand<Type>): Promise<Mapped<CreateState>> {
    const { event } = command;
    const mapped = mapPaymentRequested(event);
    if (mapped.paymentMethodId !== null) {
      await this.paymentMethods.assertKnown(mapped.paymentMethodId, event.organizationId);
    }
    const credentials = newWebhookCredentials();
    const id = randomUUID();
    return {
      state: { organizationId: event.organizationId, mapped, credentials },
      paymentId: id,
      newPayment: {
        payment: {
          id,
          eventId: event.eventId,
          orderId: event.orderId,
          organizationId: event.organizationId,
          orderNumber: event.data.orderNumber,
          customerNumber: event.data.customer.customerNumber ?? null,
          currency: mapped.currency,
          totalGrossMinor: mapped.totalGrossMinor,
          totalNetMinor: mapped.totalNetMinor,
          webhookToken: credentials.token,
          apiKeyHash: credentials.apiKeyHash,
          paymentMethodId: mapped.paymentMethodId,
          paymentRef: mapped.paymentRef,
          externalRef: mapped.externalRef,
          // The payment's webhooks continue this trace (webhook-inbox.processor.ts).
          traceHeaders: command.trace.headers(),
        },
        plan: (mapped.installments ?? []).map((entry) => ({
          ref: entry.ref,
          position: entry.position,
          date: entry.date,
          grossMinor: entry.grossMinor,
        })),
      },
    };
  }

  private call(state: CreateState, context: PayflowCallContext): Promise<CreatedPayment> {
    return this.payflow.createPayment(
      {
        ...state.mapped.input,
        callback: webhookCallback(this.options.webhookBaseUrl, state.credentials),
      },
      {
        ...context,
        ...(state.organizationId === null ? {} : { organizationId: state.organizationId }),
      },
    );
  }

  private complete(
    tx: BatchSql,
    { command, state, result, paymentId }: Completed<Type, CreateState, CreatedPayment>,
  ): Promise<StatusEvent[]> {
    if (paymentId === null) throw new Error('payment_requested completed without its payment');
    tx.defer(this.createdKey, [{ paymentId, result }], (sql, rows) => this.markCreated(sql, rows));
    const created = result.installments ?? [];
    const installments: CreatedInstallmentView[] = (state.mapped.installments ?? []).map(
      (planned) => {
        const answer = created[planned.position - 1];
        return {
          ref: planned.ref,
          payflowId: answer?.id ?? null,
          date: planned.date,
          grossMinor: planned.grossMinor,
          status: answer?.status ?? null,
        };
      },
    );
    return Promise.resolve([
      paymentCreatedEvent({
        sourceEventId: command.eventId,
        orderId: command.orderId,
        organizationId: state.organizationId,
        payflowId: result.id,
        paymentLink: result.paymentLink ?? null,
        currency: state.mapped.currency,
        totalGrossMinor: state.mapped.totalGrossMinor,
        totalNetMinor: state.mapped.totalNetMinor,
        paymentMethodId: state.mapped.paymentMethodId,
        installments,
      }),
    ]);
  }

  /** The payments of a batch `created`, their installments bound by position: one statement. */
  private async markCreated(tx: Sql, rows: readonly CreatedRow[]): Promise<void> {
    await executeTogether(tx, [
      this.payments.markCreated(
        rows.map(({ paymentId, result }) => ({
          paymentId,
          payflowId: result.id,
          paymentLink: result.paymentLink ?? null,
        })),
      ),
      this.installments.bindPayflowIds(
        rows.flatMap(({ paymentId, result }) =>
          (result.installments ?? []).map((installment, index) => ({
            paymentId,
            position: index + 1,
            payflowId: installment.id,
            type: installment.type,
            status: installment.status,
          })),
        ),
        true,
      ),
    ]);
  }

  private async onFailure(
    tx: Sql,
    failure: CommandFailure<CreateState>,
    command: OrderCommand<Type>,
  ): Promise<StatusEvent[]> {
    const { eventId, orderId } = command;
    const organizationId = command.event.organizationId;
    switch (failure.kind) {
      case 'rejected': {
        if (failure.paymentId !== null) {
          await this.payments.markCreationFailed(tx, failure.paymentId);
        }
        const { error } = failure;
        return [
          creationFailedEvent(eventId, orderId, failure.state.organizationId, {
            reason: 'rejected_by_payflow',
            code: error.code,
            message: error.message,
            validation: error instanceof PayflowValidationError ? error.detail : [],
          }),
        ];
      }
      case 'in_doubt':
        if (failure.paymentId !== null) await this.payments.markInDoubt(tx, failure.paymentId);
        return [
          creationFailedEvent(eventId, orderId, organizationId, {
            reason: 'in_doubt',
            code: 'EVENT.IN_DOUBT',
            message: `the payment may or may not exist at Payflow: ${failure.cause}`,
            validation: [],
          }),
        ];
      case 'mapping_failed':
        return [
          creationFailedEvent(eventId, orderId, organizationId, {
            reason: failure.error.deadLetterReason,
            code: failure.error.code,
            message: failure.error.message,
            validation: [],
          }),
        ];
    }
  }
}
