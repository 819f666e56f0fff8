import { describe, expect, it } from '@jest/globals';
import { parseFindingCursor } from './reconciliation.query.js';
import { findingView, nightTotalsView } from './reconciliation.view.js';

describe('the reconciliation as an operator sees it', () => {
  it('shows totals in the currency’s decimals', () => {
    const view = nightTotalsView({
      organizationId: 'org-1',
      settlementDate: '2026-11-27',
      currency: 'NOK',
      grossMinor: 124950,
      feeMinor: -5,
      netMinor: 124945,
      lines: 3,
      linesMatched: 2,
      findings: 1,
    });
    expect([view.gross, view.fee, view.net]).toEqual([
      { amount: '1249.50', currency: 'NOK' },
      { amount: '-0.05', currency: 'NOK' },
      { amount: '1249.45', currency: 'NOK' },
    ]);
    expect(
      nightTotalsView({ ...view, grossMinor: 100, feeMinor: 0, netMinor: 100, currency: 'JPY' })
        .gross,
    ).toEqual({
      amount: '100',
      currency: 'JPY',
    });
  });

  it('shows a finding open or closed, the person’s words sanitized', () => {
    const row = {
      id: '7',
      kind: 'amount_mismatch' as const,
      subjectKey: 'payment:pf-1',
      organizationId: 'org-1',
      payflowPaymentId: 'pf-1',
      orderId: 'SO-1',
      installmentId: null,
      currency: 'KWD',
      expectedMinor: null,
      settledMinor: 1,
      openedAt: new Date('2026-11-27T02:00:00.000Z'),
      closedAt: null,
      closedHow: null,
      closedReason: null,
      closedBy: null,
    };
    expect(findingView(row)).toMatchObject({
      open: true,
      expected: null,
      settled: { amount: '0.001', currency: 'KWD' },
      openedAt: '2026-11-27T02:00:00.000Z',
    });
    const closed = findingView({
      ...row,
      closedAt: new Date('2026-11-28T02:00:00.000Z'),
      closedHow: 'acknowledged',
      closedReason: 'agreed with kari@example.com',
      closedBy: 'Olga (console)',
    });
    expect(closed).toMatchObject({
      open: false,
      closedHow: 'acknowledged',
      closedBy: 'Olga (console)',
    });
    expect(closed.closedReason).not.toContain('kari@example.com');
  });

  it('reads a page cursor, or nothing', () => {
    expect(parseFindingCursor('o-12')).toEqual({ open: true, id: '12' });
    expect(parseFindingCursor('c-3')).toEqual({ open: false, id: '3' });
    for (const bad of ['', 'x-1', 'o-', 'o-1a', `o-${'9'.repeat(19)}`]) {
      expect(parseFindingCursor(bad)).toBeNull();
    }
  });
});
