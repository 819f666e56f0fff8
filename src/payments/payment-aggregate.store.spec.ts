import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { InstallmentRepository } from './installment.repository.js';
import { PaymentAggregate } from './payment.aggregate.js';
import { PaymentAggregateStore } from './payment-aggregate.store.js';
import { PaymentStatusHistoryRepository } from './payment-status-history.repository.js';
import { PaymentRepository } from './payment.repository.js';
import { RefundRepository } from './refund.repository.js';
import { render, together, type Part } from '../database/statement.js';

/** A store whose log lines are kept (a real pino logger writing to an array). */
function store(): { store: PaymentAggregateStore; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return {
    store: new PaymentAggregateStore(
      new PaymentRepository(),
      new InstallmentRepository(),
      new RefundRepository(),
      new PaymentStatusHistoryRepository(),
      logger,
    ),
    lines,
  };
}

const payment = (totalGrossMinor: bigint) =>
  PaymentAggregate.of({
    id: '00000000-0000-4000-8000-000000000001',
    orderId: 'o-1',
    currency: 'NOK',
    state: 'created',
    providerStatus: 'PENDING',
    totalGrossMinor,
    installments: [
      {
        id: '00000000-0000-4000-8000-0000000000a1',
        ref: '1',
        payflowId: 'pf-1',
        date: '2026-01-31',
        grossMinor: 2n ** 53n + 1n,
        removed: false,
      },
    ],
    refunds: [],
  });

const rendered = (parts: readonly Part[]) => render(together(parts));

describe('PaymentAggregateStore', () => {
  it("writes the aggregate's delta to the total exactly (bigint as text), with the installment", () => {
    const { store: aggregates, lines } = store();
    const change = payment(2n ** 53n + 1n).removeInstallment('1', 'CANCELLED');
    const { text, params } = rendered(aggregates.installmentParts(change));
    expect(text).toContain('UPDATE installments SET removed_at = now()');
    expect(text).toContain('total_gross_minor = total_gross_minor +');
    expect(params).toContain('-9007199254740993');
    expect(lines).toEqual([]);
  });

  it('logs a broken total invariant and still writes the change', () => {
    const { store: aggregates, lines } = store();
    const change = payment(5n).changeInstallment('1', {
      date: '2026-02-28',
      grossMinor: 100,
      status: 'CREATED',
    });
    const { params } = rendered(aggregates.installmentParts(change));
    expect(params).toContain((100n - (2n ** 53n + 1n)).toString());
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        code: 'PAYMENT.TOTAL_MISMATCH',
        paymentId: '00000000-0000-4000-8000-000000000001',
      }),
    ]);
  });

  it('records a command status with its history row, and logs a regression', () => {
    const { store: aggregates, lines } = store();
    const change = payment(2n ** 53n + 1n).markPaid('PAID');
    const { text, params } = rendered(aggregates.statusParts(change, { eventId: 'e-1' }));
    expect(text).toContain('INSERT INTO payment_status_history');
    expect(params).toEqual(expect.arrayContaining(['PAID', 'paid', 'PENDING', 'command', 'e-1']));
    expect(lines).toEqual([]);

    const cancelled = PaymentAggregate.of({
      id: 'p-2',
      orderId: 'o-2',
      currency: 'NOK',
      state: 'created',
      providerStatus: 'SUCCESS',
      totalGrossMinor: 0n,
      installments: [],
      refunds: [],
    }).cancel('PENDING');
    const parts = rendered(aggregates.cancelParts(cancelled, { eventId: 'e-2' }));
    expect(parts.text).toContain("SET state = 'cancelled'");
    expect(lines).toEqual([expect.objectContaining({ code: 'PAYMENT.STATUS_REGRESSION' })]);
  });
});
