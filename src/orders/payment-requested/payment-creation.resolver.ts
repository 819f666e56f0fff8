/**
 * Settles a payment whose creation is in doubt once Payflow's id is known (a webhook on
 * its token, or an operator): the payment becomes `created`, its attempt `resolved` (a
 * replay of the event is then a no-op) and `payment.created` is emitted. The webhook
 * processor reaches it through the IN_DOUBT_RESOLVER port (src/payments). The event
 * continues the trace of the payment's creation (payments.trace_headers).
 */
import { Injectable } from '@nestjs/common';
import { TransactionBatcher } from '../../database/transaction-batcher.js';
import { OutboxWriter } from '../../outbox/outbox-writer.js';
import type { InDoubtResolution, InDoubtResolver } from '../../payments/in-doubt-resolver.port.js';
import { InstallmentRepository } from '../../payments/installment.repository.js';
import { PaymentRepository } from '../../payments/payment.repository.js';
import { executeTogether } from '../../database/statement.js';
import { CommandAttemptRepository } from '../engine/attempts/command-attempt.repository.js';
import { paymentCreatedEvent } from './payment-created.event.js';

@Injectable()
export class PaymentCreationResolver implements InDoubtResolver {
  constructor(
    private readonly batcher: TransactionBatcher,
    private readonly payments: PaymentRepository,
    private readonly installments: InstallmentRepository,
    private readonly attempts: CommandAttemptRepository,
    private readonly outbox: OutboxWriter,
  ) {}

  /**
   * False when the payment is not in doubt (unknown, created already, or still being
   * created within its lease).
   */
  resolveInDoubt(paymentId: string, resolution: InDoubtResolution): Promise<boolean> {
    return this.batcher.run(async (tx) => {
      // A payment still `creating` is settled only when its attempt's worker stopped.
      const abandoned = await this.attempts.hasAbandoned(tx, paymentId);
      const payment = await this.payments.settleInDoubt(
        tx,
        paymentId,
        resolution.payflowId,
        resolution.paymentLink ?? null,
        abandoned,
      );
      if (payment === null) return false;
      await this.attempts.resolveForPayment(tx, paymentId);
      const installments = resolution.installments ?? [];
      if (installments.length > 0) {
        await executeTogether(tx, [
          this.installments.bindPayflowIds(
            installments.map((installment, index) => ({
              paymentId,
              position: index + 1,
              payflowId: installment.id,
              type: installment.type,
              status: installment.status,
            })),
            false,
          ),
        ]);
      }
      const views = await this.installments.liveViews(tx, paymentId);
      this.outbox.defer(
        tx,
        [
          paymentCreatedEvent({
            sourceEventId: payment.eventId,
            orderId: payment.orderId,
            organizationId: payment.organizationId,
            payflowId: resolution.payflowId,
            paymentLink: payment.paymentLink,
            currency: payment.currency,
            totalGrossMinor: payment.totalGrossMinor,
            totalNetMinor: payment.totalNetMinor,
            paymentMethodId: payment.paymentMethodId,
            installments: views,
          }),
        ],
        undefined,
        payment.traceHeaders ?? undefined,
      );
      return true;
    });
  }
}
