import { describe, expect, it } from '@jest/globals';
import { effectLine, type UnexplainedEffectView } from './unexplained-effect.view.js';

const installment: UnexplainedEffectView = {
  kind: 'installment',
  payflowId: '6b04fd6e2dc20a0b60e832d8',
  gross: { amount: '125.00', currency: 'NOK' },
  dueDate: '2027-03-01',
  providerStatus: 'CREATED',
  fileName: null,
  firstSeenAt: '2026-11-28T10:00:00.000Z',
  firstSeenBy: 'webhook',
  lastSeenAt: '2026-11-28T10:05:00.000Z',
  explainedBy: null,
};

describe('effectLine', () => {
  it('says what Payflow holds, that no event explains it, and when and how it was found', () => {
    expect(effectLine(installment)).toBe(
      'installment 6b04fd6e2dc20a0b60e832d8 (125.00 NOK, 2027-03-01) at Payflow that no event of ' +
        'this order explains, first seen 2026-11-28T10:00:00.000Z by webhook ' +
        '(last seen 2026-11-28T10:05:00.000Z, status CREATED)',
    );
    expect(
      effectLine({
        ...installment,
        kind: 'document',
        gross: null,
        dueDate: null,
        providerStatus: null,
        fileName: 'invoice.pdf',
        firstSeenBy: 'reconcile',
      }),
    ).toMatch(/^document 6b04fd6e2dc20a0b60e832d8 \(invoice\.pdf\) at Payflow that no event/);
  });

  it('no longer calls an effect unexplained once the bridge recorded it', () => {
    const line = effectLine({ ...installment, explainedBy: 'installment INST-3' });
    expect(line).not.toContain('no event of this order explains');
    expect(line).toContain('explained since, the bridge recorded it as installment INST-3');
  });
});
