import { describe, expect, it } from '@jest/globals';
import { matchPayment, totalsOf, type LineToMatch, type PaymentFacts } from './settlement-match.js';

const DAY = 86_400_000;
const clock = { now: new Date('2026-11-20T12:00:00Z'), expectedWithinMs: 3 * DAY };

let lineNumber = 1;
function aLine(grossMinor: number, over: Partial<LineToMatch> = {}): LineToMatch {
  lineNumber += 1;
  return {
    fileId: 'f1',
    lineNumber,
    organizationId: 'org-1',
    installmentId: null,
    transactionType: grossMinor < 0 ? 'refund' : 'payment',
    currency: 'NOK',
    grossMinor,
    ...over,
  };
}

function aPayment(over: Partial<PaymentFacts> = {}): PaymentFacts {
  return {
    payflowPaymentId: 'pf-1',
    orderId: 'order-1',
    organizationId: 'org-1',
    currency: 'NOK',
    totalGrossMinor: 125_000,
    installments: [],
    refundsGrossMinor: [],
    paidAt: new Date('2026-11-19T12:00:00Z'),
    paidElsewhere: false,
    ...over,
  };
}

describe('matchPayment', () => {
  it('matches a line that settles the payment total: no finding', () => {
    const result = matchPayment('pf-1', aPayment(), [aLine(125_000)], clock);
    expect(result.findings).toEqual([]);
    expect(result.lines.map((line) => line.match)).toEqual(['matched']);
  });

  it('amount_mismatch: settled gross differs from the total', () => {
    const result = matchPayment('pf-1', aPayment(), [aLine(124_999)], clock);
    expect(result.findings).toEqual([
      expect.objectContaining({
        kind: 'amount_mismatch',
        subjectKey: 'payment:pf-1',
        orderId: 'order-1',
        expectedMinor: 125_000,
        settledMinor: 124_999,
      }),
    ]);
    expect(result.lines[0]).toMatchObject({ match: 'amount_mismatch', subjectKey: 'payment:pf-1' });
  });

  it('matches installment lines to their installment, and a wrong one is a mismatch', () => {
    const facts = aPayment({
      installments: [
        { payflowInstallmentId: 'i-1', grossMinor: 50_000 },
        { payflowInstallmentId: 'i-2', grossMinor: 75_000 },
      ],
    });
    const result = matchPayment(
      'pf-1',
      facts,
      [aLine(50_000, { installmentId: 'i-1' }), aLine(70_000, { installmentId: 'i-2' })],
      clock,
    );
    expect(result.lines.map((line) => line.match)).toEqual(['matched', 'amount_mismatch']);
    expect(result.findings).toEqual([
      expect.objectContaining({
        kind: 'amount_mismatch',
        subjectKey: 'installment:i-2',
        installmentId: 'i-2',
        expectedMinor: 75_000,
        settledMinor: 70_000,
      }),
    ]);
  });

  it('an installment the payment does not have: amount_mismatch with nothing expected', () => {
    const result = matchPayment('pf-1', aPayment(), [aLine(10, { installmentId: 'x' })], clock);
    expect(result.findings).toEqual([
      expect.objectContaining({ kind: 'amount_mismatch', expectedMinor: null, settledMinor: 10 }),
    ]);
  });

  it('unknown_payment: a Payflow id the bridge never created', () => {
    const result = matchPayment('pf-x', null, [aLine(100), aLine(250)], clock);
    expect(result.findings).toEqual([
      {
        kind: 'unknown_payment',
        subjectKey: 'payment:pf-x',
        organizationId: 'org-1',
        payflowPaymentId: 'pf-x',
        orderId: null,
        installmentId: null,
        currency: 'NOK',
        expectedMinor: null,
        settledMinor: 350,
      },
    ]);
    expect(result.lines.map((line) => line.match)).toEqual(['unknown_payment', 'unknown_payment']);
  });

  it('settled_twice: two lines of one payment (across nights or files)', () => {
    const result = matchPayment(
      'pf-1',
      aPayment(),
      [aLine(125_000, { fileId: 'night-1' }), aLine(125_000, { fileId: 'night-2' })],
      clock,
    );
    expect(result.findings).toEqual([
      expect.objectContaining({
        kind: 'settled_twice',
        expectedMinor: 125_000,
        settledMinor: 250_000,
      }),
    ]);
    expect(result.lines.map((line) => line.match)).toEqual(['settled_twice', 'settled_twice']);
  });

  it('settled_twice for one installment', () => {
    const facts = aPayment({ installments: [{ payflowInstallmentId: 'i-1', grossMinor: 10 }] });
    const lines = [aLine(10, { installmentId: 'i-1' }), aLine(10, { installmentId: 'i-1' })];
    expect(matchPayment('pf-1', facts, lines, clock).findings).toEqual([
      expect.objectContaining({ kind: 'settled_twice', subjectKey: 'installment:i-1' }),
    ]);
  });

  it('refunds: matched by amount; one that matches no refund is refund_mismatch', () => {
    const facts = aPayment({ refundsGrossMinor: [20_000, 5_000] });
    const ok = matchPayment('pf-1', facts, [aLine(125_000), aLine(-5_000), aLine(-20_000)], clock);
    expect(ok.findings).toEqual([]);
    expect(ok.lines.map((line) => line.match)).toEqual(['matched', 'matched', 'matched']);

    const bad = matchPayment('pf-1', facts, [aLine(125_000), aLine(-5_000), aLine(-7_000)], clock);
    expect(bad.findings).toEqual([
      expect.objectContaining({
        kind: 'refund_mismatch',
        expectedMinor: 25_000,
        settledMinor: 12_000,
      }),
    ]);
    expect(bad.lines.map((line) => line.match)).toEqual(['matched', 'matched', 'refund_mismatch']);
  });

  it('refund_mismatch: refunds settled exceed those made', () => {
    const facts = aPayment({ refundsGrossMinor: [5_000] });
    const result = matchPayment(
      'pf-1',
      facts,
      [aLine(125_000), aLine(-5_000), aLine(-5_000)],
      clock,
    );
    expect(result.findings).toEqual([
      expect.objectContaining({
        kind: 'refund_mismatch',
        expectedMinor: 5_000,
        settledMinor: 10_000,
      }),
    ]);
  });

  it('not_settled: paid longer ago than expected, no payment line', () => {
    const old = aPayment({ paidAt: new Date(clock.now.getTime() - 3 * DAY) });
    expect(matchPayment('pf-1', old, [], clock).findings).toEqual([
      expect.objectContaining({ kind: 'not_settled', expectedMinor: 125_000, settledMinor: 0 }),
    ]);
    const recent = aPayment({ paidAt: new Date(clock.now.getTime() - 3 * DAY + 1) });
    expect(matchPayment('pf-1', recent, [], clock).findings).toEqual([]);
    expect(matchPayment('pf-1', aPayment({ paidAt: null }), [], clock).findings).toEqual([]);
    // A late line settles it.
    expect(matchPayment('pf-1', old, [aLine(125_000)], clock).findings).toEqual([]);
  });

  it('paid elsewhere: never not_settled; a payment line for it is money due nowhere', () => {
    const elsewhere = aPayment({ paidElsewhere: true, paidAt: new Date('2026-01-01T00:00:00Z') });
    expect(matchPayment('pf-1', elsewhere, [], clock).findings).toEqual([]);
    expect(matchPayment('pf-1', elsewhere, [aLine(125_000)], clock).findings).toEqual([
      expect.objectContaining({ kind: 'amount_mismatch', expectedMinor: 0, settledMinor: 125_000 }),
    ]);
  });
});

describe('totalsOf', () => {
  it('sums exactly in minor units and counts matched lines and distinct findings', () => {
    const lines = [
      { grossMinor: 9_007_199_254_740_000, feeMinor: 1, netMinor: 9_007_199_254_739_999 },
      { grossMinor: 991, feeMinor: 0, netMinor: 991 },
      { grossMinor: -10, feeMinor: 0, netMinor: -10 },
    ];
    const totals = totalsOf([
      { ...lines[0]!, match: 'matched', findingKind: null, subjectKey: null },
      { ...lines[1]!, match: 'settled_twice', findingKind: 'settled_twice', subjectKey: 'p:1' },
      { ...lines[2]!, match: 'settled_twice', findingKind: 'settled_twice', subjectKey: 'p:1' },
    ]);
    expect(totals).toEqual({
      grossMinor: 9_007_199_254_740_981,
      feeMinor: 1,
      netMinor: 9_007_199_254_740_980,
      lines: 3,
      linesMatched: 1,
      findings: 1,
    });
  });
});
