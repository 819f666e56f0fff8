import { describe, expect, it } from '@jest/globals';
import {
  PaymentAggregate,
  STATE_PREDECESSORS,
  checkInstallmentPlan,
  checkNewPaymentTotals,
  checkRefundAmounts,
  statusMayFollow,
  sumExact,
  type PaymentChange,
  type PaymentInstallment,
  type PaymentSnapshot,
} from './payment.aggregate.js';

/** Duck-typed (jest VM modules: instanceof fails across realms). */
function refusal(run: () => unknown): { code: string; message: string; deadLetterReason: string } {
  try {
    run();
  } catch (error) {
    return error as { code: string; message: string; deadLetterReason: string };
  }
  throw new Error('expected a refusal');
}

function installment(overrides: Partial<PaymentInstallment> = {}): PaymentInstallment {
  return {
    id: 'i-1',
    ref: '1',
    payflowId: 'pf-i-1',
    date: '2026-01-31',
    grossMinor: 5000n,
    removed: false,
    ...overrides,
  };
}

function payment(overrides: Partial<PaymentSnapshot> = {}): PaymentAggregate {
  return PaymentAggregate.of({
    id: 'p-1',
    orderId: 'o-1',
    currency: 'NOK',
    state: 'created',
    providerStatus: 'PENDING',
    totalGrossMinor: 10000n,
    installments: [
      installment(),
      installment({ id: 'i-2', ref: '2', payflowId: 'pf-i-2', grossMinor: 5000n }),
      installment({ id: 'i-3', ref: 'gone', payflowId: 'pf-i-3', grossMinor: 700n, removed: true }),
    ],
    refunds: [{ refundRef: 'R-1', currency: 'NOK', grossMinor: 100n }],
    ...overrides,
  });
}

const answer = { payflowId: 'pf-i-9', date: '2026-03-31', type: 'scheduled', status: 'CREATED' };

/** The total after `change`, on a payment whose total is `total`. */
const totalAfter = (total: bigint, change: PaymentChange): bigint => total + change.totalDeltaMinor;

describe('PaymentAggregate: the total equals the sum of the live installments', () => {
  it('holds for a payment whose total is its live installments (removed ones left out)', () => {
    expect(payment().installmentsGrossMinor).toBe(10000n);
    expect(payment().totalViolations()).toEqual([]);
  });

  it('does not apply to a payment without installments', () => {
    expect(payment({ installments: [], totalGrossMinor: 123n }).totalViolations()).toEqual([]);
  });

  it('reports a stored total that differs from the installments, on every change', () => {
    const broken = payment({ totalGrossMinor: 9999n });
    expect(broken.totalViolations()).toEqual([
      expect.objectContaining({ code: 'PAYMENT.TOTAL_MISMATCH' }),
    ]);
    const change = broken.removeInstallment('1', 'CANCELLED');
    expect(change.violations.map((violation) => violation.code)).toEqual([
      'PAYMENT.TOTAL_MISMATCH',
    ]);
    // The change still applies: Payflow made it.
    expect(change.totalDeltaMinor).toBe(-5000n);
  });

  it('adding an installment grows the total by its amount', () => {
    const change = payment().addInstallment('3', { ...answer, grossMinor: 2500 });
    expect(change).toMatchObject({
      kind: 'installment_added',
      paymentId: 'p-1',
      ref: '3',
      totalDeltaMinor: 2500n,
      violations: [],
    });
    expect(totalAfter(10000n, change)).toBe(10000n + 2500n);
  });

  it('changing an installment moves the total by the difference, up or down', () => {
    const up = payment().changeInstallment('2', {
      date: '2026-02-28',
      grossMinor: 7000,
      status: 'CREATED',
    });
    expect(up).toMatchObject({
      kind: 'installment_changed',
      installmentId: 'i-2',
      grossMinor: 7000,
      totalDeltaMinor: 2000n,
    });
    const down = payment().changeInstallment('1', {
      date: '2026-01-31',
      grossMinor: 1,
      status: 'CREATED',
    });
    expect(down.totalDeltaMinor).toBe(-4999n);
    // The new total is the sum of the installments after the change.
    expect(totalAfter(10000n, down)).toBe(1n + 5000n);
  });

  it('removing an installment shrinks the total by its amount', () => {
    const change = payment().removeInstallment('2', 'CANCELLED');
    expect(change).toMatchObject({
      kind: 'installment_removed',
      installmentId: 'i-2',
      status: 'CANCELLED',
      totalDeltaMinor: -5000n,
    });
    expect(totalAfter(10000n, change)).toBe(5000n);
  });

  it('sums beyond 2^53 exactly (bigint minor units)', () => {
    const big = 2n ** 53n + 1n;
    const aggregate = payment({
      totalGrossMinor: big + 3n,
      installments: [
        installment({ grossMinor: big }),
        installment({ id: 'i-2', ref: '2', grossMinor: 3n }),
      ],
    });
    expect(aggregate.installmentsGrossMinor).toBe(big + 3n);
    expect(aggregate.totalViolations()).toEqual([]);
    expect(aggregate.removeInstallment('1', 'CANCELLED').totalDeltaMinor).toBe(-big);
    expect(sumExact([big, big, -1n])).toBe(2n * big - 1n);
  });
});

describe('a new payment', () => {
  it('needs a gross total above 0 and a net total not below 0', () => {
    expect(() => checkNewPaymentTotals({ grossMinor: 1, netMinor: 0 }, 'NOK')).not.toThrow();
    expect(
      refusal(() => checkNewPaymentTotals({ grossMinor: 0, netMinor: 0 }, 'NOK')),
    ).toMatchObject({
      code: 'ORDER.NON_POSITIVE_TOTAL',
      deadLetterReason: 'mapping_failed',
      message: "the lines' gross total is 0.00 NOK; it must be greater than 0",
    });
    expect(
      refusal(() => checkNewPaymentTotals({ grossMinor: 100, netMinor: -1 }, 'NOK')),
    ).toMatchObject({
      code: 'ORDER.NEGATIVE_NET_TOTAL',
      message: "the lines' net total is -0.01 NOK; it must not be negative",
    });
  });

  const plan = (...amounts: number[]) =>
    amounts.map((grossMinor, index) => ({
      ref: String(index + 1),
      position: index + 1,
      grossMinor,
    }));

  it('accepts a plan that sums exactly to the gross total', () => {
    expect(() => checkInstallmentPlan(plan(3334, 3333, 3333), 10000, 'NOK')).not.toThrow();
    const big = Number.MAX_SAFE_INTEGER;
    // The sum is exact past 2^53 (bigint), so one minor unit too many is seen.
    expect(() => checkInstallmentPlan(plan(big, 1), big + 1, 'NOK')).not.toThrow();
    expect(refusal(() => checkInstallmentPlan(plan(big, 2), big + 1, 'NOK'))).toMatchObject({
      code: 'ORDER.INSTALLMENTS_MISMATCH',
      message: `the installments sum to 90071992547409.93 NOK, not the gross total 90071992547409.92 NOK`,
    });
  });

  it('refuses a plan whose sum is not the total, before its references and amounts', () => {
    expect(refusal(() => checkInstallmentPlan(plan(5000, 4999), 10000, 'NOK'))).toMatchObject({
      code: 'ORDER.INSTALLMENTS_MISMATCH',
      message: 'the installments sum to 99.99 NOK, not the gross total 100.00 NOK',
    });
    const twice = [
      { ref: 'a', position: 1, grossMinor: 0 },
      { ref: 'a', position: 2, grossMinor: 100 },
    ];
    expect(refusal(() => checkInstallmentPlan(twice, 100, 'NOK'))).toMatchObject({
      code: 'ORDER.DUPLICATE_INSTALLMENT_REF',
      message: 'installment reference "a" is used twice',
    });
    expect(refusal(() => checkInstallmentPlan(plan(100, 0), 100, 'NOK'))).toMatchObject({
      code: 'ORDER.INSTALLMENT_NOT_POSITIVE',
      message: 'installment 2 would be 0.00 NOK; every installment must be greater than 0',
    });
  });
});

describe('PaymentAggregate: installment references', () => {
  it('accepts a new reference and refuses one in use or used before (removed)', () => {
    expect(() => payment().requireNewInstallmentRef('3')).not.toThrow();
    for (const ref of ['1', 'gone']) {
      expect(refusal(() => payment().requireNewInstallmentRef(ref))).toMatchObject({
        code: 'ORDER.DUPLICATE_INSTALLMENT_REF',
        deadLetterReason: 'mapping_failed',
        message: `installment reference "${ref}" is already used by the order's payment`,
      });
    }
  });

  it('finds a live installment and refuses an unknown, removed or unbound one', () => {
    expect(payment().requireLiveInstallment('2')).toMatchObject({ id: 'i-2', payflowId: 'pf-i-2' });
    const unbound = payment({ installments: [installment({ payflowId: null })] });
    for (const [aggregate, ref] of [
      [payment(), 'nope'],
      [payment(), 'gone'],
      [unbound, '1'],
    ] as const) {
      expect(refusal(() => aggregate.requireLiveInstallment(ref))).toMatchObject({
        code: 'ORDER.UNKNOWN_INSTALLMENT_REF',
        deadLetterReason: 'mapping_failed',
        message: `installment reference "${ref}" is not a live installment of the order's payment`,
      });
    }
    expect(refusal(() => payment().removeInstallment('gone', 'CANCELLED')).code).toBe(
      'ORDER.UNKNOWN_INSTALLMENT_REF',
    );
    expect(
      refusal(() =>
        payment().changeInstallment('nope', {
          date: '2026-01-01',
          grossMinor: 1,
          status: 'CREATED',
        }),
      ).code,
    ).toBe('ORDER.UNKNOWN_INSTALLMENT_REF');
  });
});

describe('PaymentAggregate: refunds', () => {
  it('accepts a refund in the payment currency with a new reference', () => {
    expect(() => payment().requestRefund({ refundRef: 'R-2', currency: 'NOK' })).not.toThrow();
  });

  it('refuses another currency before a repeated reference', () => {
    expect(
      refusal(() => payment().requestRefund({ refundRef: 'R-1', currency: 'EUR' })),
    ).toMatchObject({
      code: 'ORDER.CURRENCY_MISMATCH',
      deadLetterReason: 'mapping_failed',
      message: 'refund R-1 is in EUR but the payment is in NOK',
    });
  });

  it('refuses a reference made already', () => {
    expect(
      refusal(() => payment().requestRefund({ refundRef: 'R-1', currency: 'NOK' })),
    ).toMatchObject({
      code: 'ORDER.DUPLICATE_REFUND',
      message: 'refund R-1 of order o-1 was made already',
    });
  });

  it('refuses a net above the gross, exactly, numbers or bigints', () => {
    expect(() => checkRefundAmounts(100, 100)).not.toThrow();
    expect(() => checkRefundAmounts(100, 0)).not.toThrow();
    expect(refusal(() => checkRefundAmounts(100, 101))).toMatchObject({
      code: 'ORDER.REFUND_NET_ABOVE_GROSS',
      deadLetterReason: 'mapping_failed',
    });
    expect(() => checkRefundAmounts(2n ** 60n, 2n ** 60n + 1n)).toThrow(
      'amountNet is greater than amountGross',
    );
  });
});

describe('PaymentAggregate: statuses', () => {
  it('a final status never goes back to a non-final one', () => {
    expect(statusMayFollow(null, 'DRAFT')).toBe(true);
    expect(statusMayFollow('PENDING', 'SUCCESS')).toBe(true);
    expect(statusMayFollow('PENDING', 'DRAFT')).toBe(true);
    expect(statusMayFollow('SUCCESS', 'SUCCESS')).toBe(true);
    expect(statusMayFollow('SUCCESS', 'PAID')).toBe(true);
    expect(statusMayFollow('REJECTED', 'PAID')).toBe(true);
    expect(statusMayFollow('SUCCESS', 'PENDING')).toBe(false);
    expect(statusMayFollow('PAID', 'SOMETHING_NEW')).toBe(false);
    expect(statusMayFollow('REJECTED', 'OPENED')).toBe(false);
  });

  it('a cancel records Payflow’s answer, normalized as cancelled by the bridge', () => {
    expect(payment().cancel('REJECTED')).toEqual({
      paymentId: 'p-1',
      providerStatus: 'REJECTED',
      previousProviderStatus: 'PENDING',
      status: 'cancelled',
      violations: [],
    });
  });

  it('marking paid records Payflow’s answer and its normalized status', () => {
    expect(payment({ providerStatus: null }).markPaid('PAID')).toEqual({
      paymentId: 'p-1',
      providerStatus: 'PAID',
      previousProviderStatus: null,
      status: 'paid',
      violations: [],
    });
  });

  it('a command answer that regresses a final status is kept but reported', () => {
    const change = payment({ providerStatus: 'SUCCESS' }).markPaid('PENDING');
    expect(change.status).toBe('pending');
    expect(change.violations.map((violation) => violation.code)).toEqual([
      'PAYMENT.STATUS_REGRESSION',
    ]);
  });

  it('names the states each bridge-side state may be entered from', () => {
    expect(STATE_PREDECESSORS).toEqual({
      created: ['creating', 'in_doubt'],
      creation_failed: ['creating'],
      in_doubt: ['creating'],
    });
  });
});
