import {
  InvalidPrivacyInputError,
  describeSelection,
  parsePrivacySelection,
  selectionSubject,
} from './privacy-selection.js';

describe('parsePrivacySelection', () => {
  it('takes exactly one of --order and --customer-number', () => {
    expect(parsePrivacySelection({ order: ' SO-1 ' })).toEqual({ kind: 'order', orderId: 'SO-1' });
    expect(parsePrivacySelection({ customerNumber: 'C-42' })).toEqual({
      kind: 'customer_number',
      customerNumber: 'C-42',
    });
    expect(() => parsePrivacySelection({})).toThrow(InvalidPrivacyInputError);
    expect(() => parsePrivacySelection({ order: 'SO-1', customerNumber: 'C-42' })).toThrow(
      /exactly one/,
    );
    expect(() => parsePrivacySelection({ order: '  ' })).toThrow(/--order/);
  });

  it('records a customer number only as its SHA-256, and never names it', () => {
    const selection = parsePrivacySelection({ customerNumber: 'C-42' });
    expect(selectionSubject(selection)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(selectionSubject(selection)).not.toContain('C-42');
    expect(describeSelection(selection)).not.toContain('C-42');
    expect(selectionSubject({ kind: 'order', orderId: 'SO-1' })).toBe('SO-1');
  });
});
