/**
 * The rows a payment creation writes before its Payflow call: the order (created or
 * brought up to date), the payment in state `creating` with its webhook token and key hash,
 * and its planned installments. One statement builder serves every variant: a fresh event
 * (inside the guard statement), a burst of fresh events (inside the shared guard
 * statement) and a retry (reusing the event's earlier payment row); each table's part comes
 * from its repository.
 */
import { Injectable } from '@nestjs/common';
import {
  InstallmentRepository,
  type PlannedInstallmentRow,
} from '../../payments/installment.repository.js';
import {
  NEW_PAYMENTS,
  PaymentRepository,
  type NewPaymentRow,
} from '../../payments/payment.repository.js';
import type { Part } from '../../database/statement.js';
import type { Sql } from '../../database/database.js';
import { OrderRepository } from '../order.repository.js';

/** A payment to create, as the payment_requested mapping describes it. */
export interface NewPayment {
  readonly payment: Omit<NewPaymentRow, 'n'>;
  readonly plan: readonly Omit<PlannedInstallmentRow, 'n'>[];
}

@Injectable()
export class NewPaymentWrites {
  constructor(
    private readonly orders: OrderRepository,
    private readonly payments: PaymentRepository,
    private readonly installments: InstallmentRepository,
  ) {}

  /**
   * CTEs writing `items` (the n-th is item n-1) for the rows of `gate` (a relation with a
   * column `n`): those whose attempt the guard statement recorded.
   */
  gated(items: readonly NewPayment[], gate: string): Part {
    const { payments, plan } = numbered(items);
    return (bind) =>
      [
        this.payments.newPaymentCtes(payments, gate, false),
        this.orders.upsertForNewPayments(NEW_PAYMENTS),
        this.installments.planCte(plan),
      ]
        .map((part) => part(bind))
        .join(',\n');
  }

  /**
   * The retry of an event whose earlier attempt failed without effect: its payment row (if
   * any) is reused, back in state `creating`, with the plan written again. Returns the
   * payment's id.
   */
  async retry(tx: Sql, item: NewPayment): Promise<string> {
    const existing = await this.payments.idForEvent(tx, item.payment.eventId);
    if (existing !== null) await this.installments.deleteForPayment(tx, existing);
    const reused: NewPayment = {
      ...item,
      payment: { ...item.payment, id: existing ?? item.payment.id },
    };
    const { payments, plan } = numbered([reused]);
    await this.payments.create(tx, payments, true, [
      this.orders.upsertForNewPayments(NEW_PAYMENTS),
      this.installments.planCte(plan),
    ]);
    return reused.payment.id;
  }
}

function numbered(items: readonly NewPayment[]): {
  payments: NewPaymentRow[];
  plan: PlannedInstallmentRow[];
} {
  return {
    payments: items.map((item, index) => ({ ...item.payment, n: index + 1 })),
    plan: items.flatMap((item, index) => item.plan.map((entry) => ({ ...entry, n: index + 1 }))),
  };
}
