/**
 * Loads a payment's aggregate (payment.aggregate.ts) from its tables and persists the
 * changes it decides through the repositories that own those tables' SQL, as statement
 * parts for the caller's one round trip. Invariant violations the aggregate reports are
 * logged here (the change itself applies: Payflow made it already).
 */
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Sql } from '../database/database.js';
import { APP_LOGGER } from '../logging/logger.module.js';
import { silentLogger, type AppLogger } from '../logging/logger.js';
import { InstallmentRepository } from './installment.repository.js';
import {
  PaymentAggregate,
  type InvariantViolation,
  type PaymentChange,
  type StatusChange,
} from './payment.aggregate.js';
import { PaymentStatusHistoryRepository } from './payment-status-history.repository.js';
import { PaymentRepository, type LatestPayment } from './payment.repository.js';
import { RefundRepository } from './refund.repository.js';
import type { Part } from '../database/statement.js';

/** What a status change made by a command is recorded with. */
export interface CommandStatusSource {
  /** The ERP event of the command. */
  readonly eventId: string;
}

@Injectable()
export class PaymentAggregateStore {
  private readonly logger: AppLogger;

  constructor(
    private readonly payments: PaymentRepository,
    private readonly installments: InstallmentRepository,
    private readonly refunds: RefundRepository,
    private readonly history: PaymentStatusHistoryRepository,
    @Optional() @Inject(APP_LOGGER) logger?: AppLogger,
  ) {
    this.logger = logger ?? silentLogger();
  }

  /** The aggregate of a payment created at Payflow (a command's target), with its installments and refunds. */
  async load(sql: Sql, payment: LatestPayment): Promise<PaymentAggregate> {
    const [installments, refunds] = await Promise.all([
      this.installments.forAggregate(sql, payment.id),
      this.refunds.listForPayments(sql, [payment.id]),
    ]);
    return PaymentAggregate.of({
      id: payment.id,
      orderId: payment.orderId,
      currency: payment.currency,
      state: payment.state,
      providerStatus: payment.providerStatus,
      totalGrossMinor: payment.totalGrossMinor,
      installments,
      refunds: refunds.map((refund) => ({
        refundRef: refund.refundRef,
        currency: refund.currency.trim(),
        grossMinor: BigInt(refund.gross),
      })),
    });
  }

  /** An installment change of the aggregate, as the parts that write it. */
  installmentParts(change: PaymentChange): Part[] {
    this.report(change.paymentId, change.violations);
    switch (change.kind) {
      case 'installment_added':
        return [
          this.payments.addToTotal(change.paymentId, change.totalDeltaMinor),
          this.installments.add({
            paymentId: change.paymentId,
            ref: change.ref,
            payflowId: change.answer.payflowId,
            date: change.answer.date,
            grossMinor: change.answer.grossMinor,
            type: change.answer.type,
            status: change.answer.status,
          }),
        ];
      case 'installment_changed':
        return [
          this.installments.change(
            change.installmentId,
            change.date,
            change.grossMinor,
            change.status,
          ),
          this.payments.addToTotal(change.paymentId, change.totalDeltaMinor),
        ];
      case 'installment_removed':
        return [
          this.installments.remove(change.installmentId, change.status),
          this.payments.addToTotal(change.paymentId, change.totalDeltaMinor),
        ];
    }
  }

  /** A cancellation (aggregate.cancel) with its history row, as parts. */
  cancelParts(change: StatusChange, source: CommandStatusSource): Part[] {
    this.report(change.paymentId, change.violations);
    return [
      this.payments.markCancelled(change.paymentId, change.providerStatus, change.status),
      this.historyPart(change, source),
    ];
  }

  /** A status a command answered (aggregate.markPaid) with its history row, as parts. */
  statusParts(change: StatusChange, source: CommandStatusSource): Part[] {
    this.report(change.paymentId, change.violations);
    return [
      this.payments.setStatus(change.paymentId, change.providerStatus, change.status),
      this.historyPart(change, source),
    ];
  }

  private historyPart(change: StatusChange, source: CommandStatusSource): Part {
    return this.history.record({
      paymentId: change.paymentId,
      providerStatus: change.providerStatus,
      previousProviderStatus: change.previousProviderStatus,
      status: change.status,
      source: 'command',
      eventId: source.eventId,
    });
  }

  private report(paymentId: string, violations: readonly InvariantViolation[]): void {
    for (const violation of violations) {
      this.logger.warn(
        { paymentId, code: violation.code, detail: violation.message },
        'a payment invariant is broken; the change Payflow made is recorded as it is',
      );
    }
  }
}
